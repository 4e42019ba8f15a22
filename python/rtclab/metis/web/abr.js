/* rtclab: Pensieve's ABR state inside dash.js, with a pluggable decision (fixed, Metis tree or the
 * Pensieve DNN in tf.js). Spec zhuge-metis.md B.6.4 (the deployment case) and B.7 (the state).
 *
 * The state is Pensieve's 6 x 8 (hongzimao/pensieve rl_server): after each video chunk the rows shift
 * left and column 7 takes the chunk's bitrate / 4300, the buffer / 10 s, its throughput in kB/ms,
 * its download time / 10 s, the next chunk's six sizes in MB (row 4, columns 0-5) and
 * min(chunks left, 48) / 48. The decision for the next chunk is made once, when a chunk finishes,
 * and handed to dash.js through a custom quality-switch rule (dash.js' own rules are switched off).
 * The harness reads everything it measures from `window.rtclabAbr`.
 */
(function () {
    'use strict';
    const BITRATES = [300, 750, 1200, 1850, 2850, 4300];
    const S_INFO = 6, S_LEN = 8, TOTAL = 48, DEFAULT_QUALITY = 1;

    const abr = {
        ready: false, readyAt: null, failed: null,
        decide: null, sizes: null,
        state: Array.from({length: S_INFO}, () => new Array(S_LEN).fill(0)),
        chunks: 0, next: DEFAULT_QUALITY, levels: [], seen: [],
        states: [],
    };
    window.rtclabAbr = abr;

    abr.fail = function (e) { abr.failed = String(e && e.stack ? e.stack : e); };

    /** Marks the page ready to decide: the page-load time the harness reads. */
    abr.markReady = function () {
        abr.readyAt = performance.now();
        if (typeof window.gc === 'function') window.gc();   // Chromium with --js-flags=--expose-gc
        abr.heapAtReady = performance.memory ? performance.memory.usedJSHeapSize : null;
        abr.ready = true;
    };

    /** The 48 state values, row by row (Pensieve's network input). */
    abr.flat = function (s) { return [].concat(...(s || abr.state)); };

    /** Metis' 25 features of a state (rtclab.metis.pensieve.FEATURE_NAMES). */
    abr.features = function (s) {
        s = s || abr.state;
        return [s[0][7], s[1][7]].concat(s[2], s[3], s[4].slice(0, 6), [s[5][7]]);
    };

    abr.onChunk = function (quality, bytes, delayMs, bufferS) {
        const s = abr.state;
        for (const row of s) row.push(row.shift());
        abr.chunks += 1;
        s[0][7] = BITRATES[quality] / BITRATES[5];
        s[1][7] = bufferS / 10;
        s[2][7] = bytes / Math.max(delayMs, 1e-3) / 1000;
        s[3][7] = delayMs / 1000 / 10;
        if (abr.sizes && abr.chunks < TOTAL) {
            for (let l = 0; l < 6; l++) s[4][l] = abr.sizes[l][abr.chunks] / 1e6;
        }
        s[5][7] = Math.min(TOTAL - abr.chunks, 48) / 48;
        abr.levels.push(quality);
        if (abr.decide && abr.chunks < TOTAL) {
            abr.states.push(s.map(r => r.slice()));
            abr.next = abr.decide(s);
        }
    };

    /** Mean time of one decision (ms) over the states met in playback, each decided `repeat` times. */
    abr.benchmark = function (repeat) {
        if (!abr.decide || !abr.states.length) return null;
        const t0 = performance.now();
        for (let k = 0; k < repeat; k++) for (const s of abr.states) abr.decide(s);
        return (performance.now() - t0) / (repeat * abr.states.length);
    };

    /** A decision from a Metis tree given as flat arrays (CART: x[f] <= threshold goes left). */
    abr.treeDecider = function (t) {
        return function (s) {
            const x = abr.features(s);
            let i = 0;
            while (t.feature[i] >= 0) i = x[t.feature[i]] <= t.threshold[i] ? t.left[i] : t.right[i];
            return t.value[i];
        };
    };

    function levelRule() {
        const factory = dashjs.FactoryMaker;
        const SwitchRequest = factory.getClassFactoryByName('SwitchRequest');
        const context = this.context;
        function getSwitchRequest(rulesContext) {
            const req = SwitchRequest(context).create();
            if (rulesContext.getMediaType() !== 'video') return req;
            const reps = rulesContext.getAbrController()
                .getPossibleVoRepresentationsFilteredBySettings(rulesContext.getMediaInfo(), true)
                .slice().sort((a, b) => a.bandwidth - b.bandwidth);
            const q = Math.max(0, Math.min(reps.length - 1, abr.next));
            req.representation = reps[q];
            req.priority = SwitchRequest.PRIORITY.STRONG;
            req.reason = {rule: 'rtclab', level: q};
            return req;
        }
        return {getSwitchRequest: getSwitchRequest, reset: function () {}};
    }

    /** Starts playback of `url` in `video` with `decide(state) -> level` (null: always level 0). */
    abr.play = function (video, url, decide) {
        abr.decide = decide;
        if (!decide) abr.next = 0;
        const player = dashjs.MediaPlayer().create();
        const off = {active: false};
        player.updateSettings({
            debug: {logLevel: dashjs.Debug.LOG_LEVEL_WARNING},
            streaming: {
                buffer: {bufferTimeDefault: 60, bufferTimeAtTopQuality: 60, bufferTimeAtTopQualityLongForm: 60},
                abr: {
                    autoSwitchBitrate: {video: true},
                    rules: {throughputRule: off, bolaRule: off, insufficientBufferRule: off, switchHistoryRule: off,
                            droppedFramesRule: off, abandonRequestsRule: off, l2ARule: off, loLPRule: off},
                },
            },
        });
        levelRule.__dashjs_factory_name = 'RtclabLevelRule';
        player.addABRCustomRule('qualitySwitchRules', 'RtclabLevelRule',
                                dashjs.FactoryMaker.getClassFactory(levelRule));
        player.on(dashjs.MediaPlayer.events.FRAGMENT_LOADING_COMPLETED, function (e) {
            const r = e.request;
            if (!r || r.mediaType !== 'video' || r.type !== 'MediaSegment') return;
            try {
                const level = Number(r.representation ? r.representation.id : r.representationId);
                const bytes = r.bytesLoaded || r.bytesTotal || 0;
                const delay = (r.requestEndDate || new Date()) - r.startDate;
                abr.onChunk(level, bytes, delay, player.getBufferLength('video') || 0);
            } catch (err) { abr.fail(err); }
        });
        player.on(dashjs.MediaPlayer.events.ERROR, function (e) { abr.fail(JSON.stringify(e.error || e)); });
        player.initialize(video, url, true);
        abr.player = player;
        return player;
    };
})();
