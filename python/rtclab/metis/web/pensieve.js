/* rtclab: Pensieve's released actor in TensorFlow.js (spec zhuge-metis.md B.6.4).
 *
 * The graph is the released one (hongzimao/pensieve a3c.py, tflearn): six ReLU branches of 128 over
 * the 6 x 8 state (rows 0, 1 and column 7 of row 4 through dense layers; rows 2, 3 and the first six
 * values of row 4 through 1-D convolutions of 128 filters, width 4, 'same' padding, over a
 * length-1 sequence), their 768 outputs through a dense ReLU layer of 128, then a 6-way softmax.
 * The weights are the released checkpoint's (all taps of the convolutions included), stored by
 * rtclab as model.json (names, shapes, offsets) + weights.bin (float32, little-endian).
 */
(function () {
    'use strict';
    const net = {weights: null};
    window.rtclabPensieve = net;

    net.load = async function (base) {
        const meta = await (await fetch(base + '/model.json')).json();
        const buf = await (await fetch(base + '/weights.bin')).arrayBuffer();
        const w = {};
        for (const a of meta.arrays) {
            const n = a.shape.reduce((x, y) => x * y, 1);
            w[a.name] = tf.tensor(new Float32Array(buf, a.offset, n), a.shape, 'float32');
        }
        // tflearn's conv_1d filter [4, 1, C, 128] is tf.conv1d's [4, C, 128].
        for (const name of ['Conv1D', 'Conv1D_1', 'Conv1D_2']) {
            const f = w[name + '.W'];
            w[name + '.W'] = f.reshape([f.shape[0], f.shape[2], f.shape[3]]);
            f.dispose();
        }
        net.weights = w;
        return net;
    };

    function dense(x, name) {
        return tf.relu(tf.add(tf.matMul(x, net.weights[name + '.W']), net.weights[name + '.b']));
    }

    function conv(s, row, cols, name) {
        const x = s.slice([0, row, 0], [1, 1, cols]);                  // [batch 1, width 1, channels]
        const y = tf.conv1d(x, net.weights[name + '.W'], 1, 'same');   // [1, 1, 128]
        return tf.relu(tf.add(y.reshape([1, 128]), net.weights[name + '.b']));
    }

    /** Action probabilities for one state given as 48 numbers, row by row. */
    net.probs = function (flat) {
        return tf.tidy(() => {
            const s = tf.tensor(flat, [1, 6, 8], 'float32');
            const at = (row, col) => s.slice([0, row, col], [1, 1, 1]).reshape([1, 1]);
            const h = tf.concat([
                dense(at(0, 7), 'FullyConnected'),
                dense(at(1, 7), 'FullyConnected_1'),
                conv(s, 2, 8, 'Conv1D'),
                conv(s, 3, 8, 'Conv1D_1'),
                conv(s, 4, 6, 'Conv1D_2'),
                dense(at(4, 7), 'FullyConnected_2'),
            ], 1);
            const z = tf.add(tf.matMul(dense(h, 'FullyConnected_3'), net.weights['FullyConnected_4.W']),
                             net.weights['FullyConnected_4.b']);
            return Array.from(tf.softmax(z).dataSync());
        });
    };

    /** The greedy decision for a 6 x 8 state. */
    net.decide = function (state) {
        const p = net.probs([].concat(...state));
        let best = 0;
        for (let i = 1; i < p.length; i++) if (p[i] > p[best]) best = i;
        return best;
    };
})();
