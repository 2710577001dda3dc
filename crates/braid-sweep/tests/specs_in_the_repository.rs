//! Every sweep spec in the repository's `sweeps/` folder loads and its cells check (the first
//! cell and every axis value once, as `braid sweep` does before its first run): a spec that
//! docs/validation.md names must not fail when a reader runs it.

use std::path::Path;

use braid_sweep::engine::check_cells;
use braid_sweep::Spec;

#[test]
fn every_spec_in_sweeps_loads_and_its_cells_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sweeps");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("the sweeps folder") {
        let path = entry.expect("a folder entry").path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let spec = Spec::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        check_cells(&spec).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(spec.runs() > 0, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} specs found in {}", dir.display());
}
