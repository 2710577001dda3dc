//! Which runs a sweep has, and in what order: the cross product of the axes in the order the
//! spec writes them (the last axis varies fastest), each cell repeated `reps` times
//! (innermost). A run's id is its index in that enumeration; it never depends on `--jobs`,
//! on timing or on sharding.

use std::fmt;
use std::str::FromStr;

use crate::spec::{AxisValue, Spec};

/// One run: its id, its cell's index into each axis, and its repetition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunKey {
    pub id: u64,
    pub cell: u64,
    /// For each axis, the index of this cell's value.
    pub value_index: Vec<usize>,
    pub rep: u32,
}

/// The run with id `id` (`id < spec.runs()`).
pub fn run_key(spec: &Spec, id: u64) -> RunKey {
    let reps = u64::from(spec.reps);
    let cell = id / reps;
    let rep = (id % reps) as u32;
    let mut value_index = vec![0; spec.axes.len()];
    let mut rest = cell;
    for (slot, axis) in value_index.iter_mut().zip(&spec.axes).rev() {
        let n = axis.values.len() as u64;
        *slot = (rest % n) as usize;
        rest /= n;
    }
    RunKey { id, cell, value_index, rep }
}

/// The `--set` overrides of a run's cell: the noise model's when the spec has `noise = true`,
/// then the spec's `[set]`, then each axis's in axis order (one for a scalar axis, the entry's
/// overrides for a table axis). A later override of a key wins, so `[set]` and the axes can
/// change any noise field.
pub fn cell_overrides(spec: &Spec, key: &RunKey) -> Vec<String> {
    let axes = spec.axes.iter().zip(&key.value_index);
    spec.noise_overrides()
        .into_iter()
        .chain(spec.set.iter().cloned())
        .chain(axes.flat_map(|(axis, &i)| axis.overrides(i)))
        .collect()
}

/// The axis values of a run's cell, in axis order.
pub fn cell_values<'a>(spec: &'a Spec, key: &RunKey) -> Vec<&'a AxisValue> {
    spec.axes.iter().zip(&key.value_index).map(|(axis, &i)| &axis.values[i]).collect()
}

/// `--shard I/N`: the runs whose id is `I-1` modulo `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: u64,
    pub count: u64,
}

/// Why a `--shard` argument was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("--shard {given:?}: expected I/N with integers, e.g. 3/10")]
    Syntax { given: String },
    #[error("--shard {given:?}: I must be in 1..=N (N = {count} >= 1), found I = {index}")]
    Range { given: String, index: u64, count: u64 },
}

impl FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax { given: s.to_string() };
        let (i, n) = s.split_once('/').ok_or_else(syntax)?;
        let index: u64 = i.trim().parse().map_err(|_| syntax())?;
        let count: u64 = n.trim().parse().map_err(|_| syntax())?;
        if count == 0 || index == 0 || index > count {
            return Err(ShardError::Range { given: s.to_string(), index, count });
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether run `id` belongs to this shard.
    pub fn contains(&self, id: u64) -> bool {
        id % self.count == self.index - 1
    }
}

/// The run ids a sweep (or one shard of it) runs, ascending.
pub fn selected_runs(spec: &Spec, shard: Option<Shard>) -> impl Iterator<Item = u64> {
    (0..spec.runs()).filter(move |&id| shard.is_none_or(|s| s.contains(id)))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn spec(text: &str) -> Spec {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = format!("base = \"Cargo.toml\"\nnoise = false\n{text}");
        Spec::parse(&text, Path::new("s.toml"), dir).unwrap()
    }

    #[test]
    fn last_axis_varies_fastest_and_reps_innermost() {
        let s = spec("reps = 2\n[axes]\na = [\"x\", \"y\"]\nb = [1, 2, 3]");
        let got: Vec<(Vec<usize>, u32)> =
            (0..s.runs()).map(|id| run_key(&s, id)).map(|k| (k.value_index, k.rep)).collect();
        let mut want = Vec::new();
        for a in 0..2 {
            for b in 0..3 {
                for rep in 0..2 {
                    want.push((vec![a, b], rep));
                }
            }
        }
        assert_eq!(got, want);
        let k = run_key(&s, 9);
        assert_eq!((k.cell, k.rep), (4, 1));
        assert_eq!(cell_overrides(&s, &k), ["a=\"y\"", "b=2"]);
    }

    #[test]
    fn set_comes_before_axes() {
        let s = spec("[set]\n\"e2e.bytes\" = 5\n[axes]\nkeys = [\"\", \"SHORT\"]");
        assert_eq!(cell_overrides(&s, &run_key(&s, 1)), ["e2e.bytes=5", "keys=\"SHORT\""]);
    }

    #[test]
    fn table_axis_entries_apply_together_in_order() {
        let s = spec(
            "[axes]\nc = [{ label = \"p\", \"e2e.cc\" = \"bbr\", \"tunnel.cc\" = \"ccid5\" }, \
             { label = \"q\", \"tunnel.cc\" = \"bbr\", \"e2e.cc\" = \"cubic\" }]\n\
             \"tunnel.scheduler\" = [\"cpf\", \"srtt\"]",
        );
        assert_eq!(s.runs(), 4);
        assert_eq!(
            cell_overrides(&s, &run_key(&s, 1)),
            ["e2e.cc=\"bbr\"", "tunnel.cc=\"ccid5\"", "tunnel.scheduler=\"srtt\""]
        );
        // Written order, not alphabetical.
        assert_eq!(
            cell_overrides(&s, &run_key(&s, 2)),
            ["tunnel.cc=\"bbr\"", "e2e.cc=\"cubic\"", "tunnel.scheduler=\"cpf\""]
        );
        assert_eq!(cell_values(&s, &run_key(&s, 2))[0], &AxisValue::Str("q".into()));
    }

    #[test]
    fn noise_comes_first_so_set_and_axes_win() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = "base = \"Cargo.toml\"\n[set]\n\"sim.noise.cc_phase\" = false\n\
                    [axes]\n\"sim.noise.host_jitter_us\" = [5.0]";
        let s = Spec::parse(text, Path::new("s.toml"), dir).unwrap();
        let o = cell_overrides(&s, &run_key(&s, 0));
        let noise = braid_sim::scenario::NoiseConfig::host().overrides();
        assert_eq!(o[..noise.len()], noise[..]);
        assert_eq!(o[noise.len()..], ["sim.noise.cc_phase=false", "sim.noise.host_jitter_us=5.0"]);
        let scenario = braid_sim::Scenario::from_toml_str("", &o).unwrap();
        assert!(!scenario.sim.noise.cc_phase);
        assert_eq!(scenario.sim.noise.host_jitter_us, 5.0);
        assert_eq!(scenario.sim.noise.start_offset_ms, 1000.0);
    }

    #[test]
    fn no_axes_is_one_cell() {
        let s = spec("reps = 3");
        assert_eq!(s.runs(), 3);
        assert_eq!(run_key(&s, 2), RunKey { id: 2, cell: 0, value_index: vec![], rep: 2 });
    }

    #[test]
    fn shards_partition_the_runs() {
        let s = spec("reps = 3\n[axes]\na = [1, 2, 3, 4, 5]");
        let n = 4;
        let mut all: Vec<u64> = (1..=n)
            .flat_map(|i| selected_runs(&s, Some(Shard { index: i, count: n })).collect::<Vec<_>>())
            .collect();
        all.sort();
        assert_eq!(all, (0..15).collect::<Vec<_>>());
        let first: Vec<u64> = selected_runs(&s, Some("1/4".parse().unwrap())).collect();
        assert_eq!(first, [0, 4, 8, 12]);
    }

    #[test]
    fn shard_syntax_and_range() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        for bad in ["3", "a/3", "1/", "-1/3"] {
            assert!(matches!(bad.parse::<Shard>(), Err(ShardError::Syntax { .. })), "{bad}");
        }
        for bad in ["0/3", "4/3", "1/0"] {
            let err = bad.parse::<Shard>().unwrap_err();
            assert!(matches!(err, ShardError::Range { .. }), "{bad}");
            assert!(err.to_string().contains("1..=N"), "{err}");
        }
    }
}
