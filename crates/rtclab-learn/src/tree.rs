//! A decision tree as flat arrays, evaluated without recursion: the online half of Metis
//! (Meng et al., "Interpreting Deep Learning-Based Networking Systems", SIGCOMM'20, §4; spec
//! `zhuge-metis.md` B.9). A node is either a split (`x[feature] <= threshold` goes left, as
//! in CART/scikit-learn) or a leaf holding the output (a class label for a classification
//! tree, a number for a regression tree). The walk is `i = kids[2i + (x > t)]`, one
//! data-dependent load per level and no branch on the comparison.
//!
//! The JSON (written by `rtclab.metis`, documented in docs/algorithms/metis.md):
//!
//! ```json
//! {"format": "rtclab-tree", "version": 1, "task": "classification",
//!  "n_features": 25, "feature_names": ["last_bitrate", ...], "classes": [0, 1, 2, 3, 4, 5],
//!  "nodes": {"feature": [0, -1, -1], "threshold": [0.5, 0, 0],
//!            "left": [1, -1, -1], "right": [2, -1, -1], "value": [0, 3, 5]}}
//! ```
//!
//! `feature = -1` marks a leaf; children come after their parent (pre-order, as CART
//! writes them), which also rules out cycles. Every violation is an error naming the node.

use serde_json::Value;

const LEAF: u32 = u32::MAX;

/// Classification (the leaf value is a class label) or regression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    Classification,
    Regression,
}

/// A tree ready to evaluate.
#[derive(Clone, Debug)]
pub struct FlatTree {
    pub task: Task,
    pub n_features: usize,
    pub feature_names: Vec<String>,
    feature: Vec<u32>,
    threshold: Vec<f64>,
    kids: Vec<u32>,
    value: Vec<f64>,
    depth: usize,
}

impl FlatTree {
    /// Builds a tree from column arrays (`feature < 0` = leaf); checks the structure.
    pub fn from_arrays(
        task: Task,
        n_features: usize,
        feature: &[i64],
        threshold: &[f64],
        left: &[i64],
        right: &[i64],
        value: &[f64],
    ) -> Result<FlatTree, String> {
        let n = feature.len();
        if n == 0 {
            return Err("the tree has no nodes".into());
        }
        for (name, len) in [
            ("threshold", threshold.len()),
            ("left", left.len()),
            ("right", right.len()),
            ("value", value.len()),
        ] {
            if len != n {
                return Err(format!("nodes.{name} has {len} entries but nodes.feature has {n}"));
            }
        }
        if n_features == 0 {
            return Err("n_features must be at least 1".into());
        }
        let mut t = FlatTree {
            task,
            n_features,
            feature_names: Vec::new(),
            feature: vec![LEAF; n],
            threshold: vec![0.0; n],
            kids: vec![0; 2 * n],
            value: vec![0.0; n],
            depth: 0,
        };
        let mut reached = vec![false; n];
        reached[0] = true;
        for i in 0..n {
            if !reached[i] {
                return Err(format!("node {i} is not reachable from the root"));
            }
            if feature[i] < 0 {
                if !value[i].is_finite() {
                    return Err(format!("leaf {i} has a non-finite value"));
                }
                t.value[i] = value[i];
                continue;
            }
            let f = feature[i] as usize;
            if f >= n_features {
                return Err(format!(
                    "node {i} splits on feature {f}, but the tree has {n_features} features"
                ));
            }
            if !threshold[i].is_finite() {
                return Err(format!("node {i} has a non-finite threshold"));
            }
            for (side, c) in [("left", left[i]), ("right", right[i])] {
                if c <= i as i64 || c >= n as i64 {
                    return Err(format!(
                        "node {i}: {side} child {c} must come after it and exist (0..{n})"
                    ));
                }
                if reached[c as usize] {
                    return Err(format!("node {c} has two parents"));
                }
                reached[c as usize] = true;
            }
            t.feature[i] = f as u32;
            t.threshold[i] = threshold[i];
            t.kids[2 * i] = left[i] as u32;
            t.kids[2 * i + 1] = right[i] as u32;
        }
        t.depth = t.compute_depth();
        Ok(t)
    }

    /// Parses rtclab's tree JSON; `source` (a file name) prefixes every error.
    pub fn from_json(source: &str, text: &str) -> Result<FlatTree, String> {
        let err = |m: String| format!("{source}: {m}");
        let v: Value =
            serde_json::from_str(text).map_err(|e| err(format!("not valid JSON: {e}")))?;
        let obj = v.as_object().ok_or_else(|| err("the tree must be a JSON object".into()))?;
        match obj.get("format").and_then(Value::as_str) {
            Some("rtclab-tree") => {}
            other => {
                return Err(err(format!("\"format\" must be \"rtclab-tree\" (found {other:?})")))
            }
        }
        let task = match obj.get("task").and_then(Value::as_str) {
            Some("classification") => Task::Classification,
            Some("regression") => Task::Regression,
            other => {
                return Err(err(format!(
                    "\"task\" must be \"classification\" or \"regression\" (found {other:?})"
                )))
            }
        };
        let n_features = obj
            .get("n_features")
            .and_then(Value::as_u64)
            .ok_or_else(|| err("\"n_features\" (a positive integer) is missing".into()))?
            as usize;
        let nodes = obj
            .get("nodes")
            .and_then(Value::as_object)
            .ok_or_else(|| err("\"nodes\" (an object of arrays) is missing".into()))?;
        let nums = |key: &str| -> Result<Vec<f64>, String> {
            let a = nodes
                .get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| err(format!("nodes.{key} (an array) is missing")))?;
            a.iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_f64().ok_or_else(|| err(format!("nodes.{key}[{i}] is not a number")))
                })
                .collect()
        };
        let ints = |key: &str| -> Result<Vec<i64>, String> {
            nums(key)?
                .into_iter()
                .enumerate()
                .map(|(i, x)| {
                    if x.fract() == 0.0 && x.abs() < 1e15 {
                        Ok(x as i64)
                    } else {
                        Err(err(format!("nodes.{key}[{i}] = {x} is not an integer")))
                    }
                })
                .collect()
        };
        let mut t = FlatTree::from_arrays(
            task,
            n_features,
            &ints("feature")?,
            &nums("threshold")?,
            &ints("left")?,
            &ints("right")?,
            &nums("value")?,
        )
        .map_err(err)?;
        if let Some(names) = obj.get("feature_names").and_then(Value::as_array) {
            if names.len() != n_features {
                return Err(err(format!(
                    "{} feature names for {n_features} features",
                    names.len()
                )));
            }
            t.feature_names = names.iter().map(|x| x.as_str().unwrap_or("").to_string()).collect();
        }
        Ok(t)
    }

    fn compute_depth(&self) -> usize {
        let mut depth = vec![0usize; self.feature.len()];
        let mut max = 0;
        for i in 0..self.feature.len() {
            if self.feature[i] != LEAF {
                for k in [self.kids[2 * i], self.kids[2 * i + 1]] {
                    depth[k as usize] = depth[i] + 1;
                    max = max.max(depth[i] + 1);
                }
            }
        }
        max
    }

    pub fn node_count(&self) -> usize {
        self.feature.len()
    }

    pub fn leaf_count(&self) -> usize {
        self.feature.iter().filter(|&&f| f == LEAF).count()
    }

    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Bytes the arrays take.
    pub fn memory_bytes(&self) -> usize {
        self.feature.len() * 4
            + self.threshold.len() * 8
            + self.kids.len() * 4
            + self.value.len() * 8
    }

    /// The output for `x` (`x.len()` must be `n_features`; checked in debug builds and by
    /// [`FlatTree::predict_checked`]). A NaN feature goes right (`NaN <= t` is false).
    #[inline]
    pub fn predict(&self, x: &[f64]) -> f64 {
        debug_assert_eq!(x.len(), self.n_features);
        let mut i = 0usize;
        loop {
            let f = self.feature[i];
            if f == LEAF {
                return self.value[i];
            }
            let left = x[f as usize] <= self.threshold[i];
            i = self.kids[2 * i + usize::from(!left)] as usize;
        }
    }

    pub fn predict_checked(&self, x: &[f64]) -> Result<f64, String> {
        if x.len() != self.n_features {
            return Err(format!(
                "the tree reads {} features, {} were given",
                self.n_features,
                x.len()
            ));
        }
        Ok(self.predict(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r#"{"format": "rtclab-tree", "version": 1, "task": "classification",
        "n_features": 2, "feature_names": ["a", "b"],
        "nodes": {"feature": [0, -1, 1, -1, -1], "threshold": [0.5, 0, 2.0, 0, 0],
                  "left": [1, -1, 3, -1, -1], "right": [2, -1, 4, -1, -1],
                  "value": [0, 7, 0, 8, 9]}}"#;

    #[test]
    fn walks_left_on_less_or_equal() {
        let t = FlatTree::from_json("t.json", JSON).unwrap();
        assert_eq!(t.predict(&[0.5, 100.0]), 7.0);
        assert_eq!(t.predict(&[0.6, 2.0]), 8.0);
        assert_eq!(t.predict(&[0.6, 2.1]), 9.0);
        assert_eq!((t.leaf_count(), t.depth(), t.node_count()), (3, 2, 5));
        assert!(t.predict_checked(&[1.0]).unwrap_err().contains("2 features"));
    }

    #[test]
    fn malformed_trees_are_named() {
        let bad = |from: &str, to: &str| {
            FlatTree::from_json("x.json", &JSON.replace(from, to)).unwrap_err()
        };
        assert!(bad("\"feature\": [0, -1, 1", "\"feature\": [0, -1, 5").contains("feature 5"));
        assert!(bad("\"left\": [1, -1, 3", "\"left\": [1, -1, 1").contains("node 2"));
        assert!(bad("rtclab-tree", "sklearn").contains("format"));
        assert!(bad("\"value\": [0, 7, 0, 8, 9]", "\"value\": [0, 7]").contains("nodes.value"));
        assert!(bad("\"n_features\": 2", "\"n_features\": 3").contains("3 features"));
        assert!(FlatTree::from_json("x.json", "{")
            .unwrap_err()
            .starts_with("x.json: not valid JSON"));
    }
}
