//! `braid tunnel check --config FILE` on the example configurations: with their keys filled in
//! they pass (exit 0, a one-line summary), and each kind of mistake fails naming its field.
//! The examples name devices this machine does not have (wlan0, wwan0), so passing also shows
//! the check opens no socket and creates no device.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use std::io::Write;

fn braid(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("braid runs");
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh folder with a key pair per end: (folder, client public key, server public key).
fn keys(name: &str) -> (PathBuf, String, String) {
    let dir =
        std::env::temp_dir().join(format!("braid-tunnel-check-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let mut public = Vec::new();
    for end in ["client", "server"] {
        let key = text(&braid(&["genkey"], None).stdout);
        let path = dir.join(format!("{end}.key"));
        fs::write(&path, &key).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        public.push(text(&braid(&["pubkey"], Some(&key)).stdout).trim().to_string());
    }
    (dir, public.remove(0), public.remove(0))
}

fn example(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    fs::read_to_string(root.join(name)).unwrap()
}

/// Writes the example `name` into `dir`, its placeholder keys replaced, after `edit`.
fn filled(
    dir: &Path,
    name: &str,
    client: &str,
    server: &str,
    edit: impl Fn(String) -> String,
) -> PathBuf {
    let body =
        example(name).replace("SERVER_PUBLIC_KEY", server).replace("CLIENT_PUBLIC_KEY", client);
    let path = dir.join(name);
    fs::write(&path, edit(body)).unwrap();
    path
}

/// A change to an example's text.
type Edit = Box<dyn Fn(String) -> String>;

fn check(path: &Path) -> Output {
    braid(&["tunnel", "check", "--config", path.to_str().unwrap()], None)
}

#[test]
fn the_examples_pass_once_their_keys_are_filled_in() {
    let (dir, client, server) = keys("examples");
    let out = check(&filled(&dir, "client.toml", &client, &server, |s| s));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary = text(&out.stdout);
    assert!(summary.contains("ok: client \"braid0\""), "{summary}");
    assert!(
        summary.contains("wifi (bind 0.0.0.0:0, device wlan0, remote 203.0.113.7:51820, cost 1)"),
        "{summary}"
    );
    let out = check(&filled(&dir, "server.toml", &client, &server, |s| s));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("ok: server \"braid0\""), "{}", text(&out.stdout));
    // The several-clients example, with a second client key.
    let second = text(&braid(&["pubkey"], Some(&text(&braid(&["genkey"], None).stdout))).stdout);
    let multi = |s: String| s.replace("LAPTOP_PUBLIC_KEY", second.trim());
    let out = check(&filled(&dir, "server-multi.toml", &client, &server, multi));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("2 peer(s): phone, laptop"), "{}", text(&out.stdout));
    // The same key twice, or overlapping addresses, are refused naming the field.
    let twice = |s: String| s.replace("LAPTOP_PUBLIC_KEY", &client);
    let out = check(&filled(&dir, "server-multi.toml", &client, &server, twice));
    assert!(text(&out.stderr).contains("peer.1.public_key"), "{}", text(&out.stderr));
    let overlap = move |s: String| multi(s).replace("10.200.0.3/32", "10.200.0.0/24");
    let out = check(&filled(&dir, "server-multi.toml", &client, &server, overlap));
    assert!(text(&out.stderr).contains("peer.1.allowed_ips.0"), "{}", text(&out.stderr));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn each_kind_of_mistake_fails_naming_its_field() {
    let (dir, client, server) = keys("mistakes");
    let cases: Vec<(&str, Edit, &[&str])> = vec![
        // The example as shipped: the peer's key is still a placeholder.
        ("as shipped", Box::new(|_| example("client.toml")), &["peer.public_key"]),
        (
            "mtu",
            Box::new(|s: String| s.replace("mtu = 1400", "mtu = 100")),
            &["interface.mtu", "576..=9000"],
        ),
        (
            "unknown key",
            Box::new(|s: String| s.replace("cost = 2", "cost = 2\nweight = 3")),
            &["weight"],
        ),
        (
            "tunnel",
            Box::new(|s: String| {
                s.replace("# [tunnel]", "[tunnel]")
                    .replace("# scheduler = \"acpf\"", "scheduler = \"fastest\"")
            }),
            &["tunnel.scheduler"],
        ),
        (
            "own key",
            Box::new(move |s: String| s.replace("client.key", "server.key")),
            &["peer.public_key", "own public key"],
        ),
    ];
    for (what, edit, words) in cases {
        let out = check(&filled(&dir, "client.toml", &client, &server, edit));
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{what}: passed");
        for w in words {
            assert!(err.contains(w), "{what}: {err:?} lacks {w:?}");
        }
    }
    // A key file others may read.
    let key = dir.join("client.key");
    fs::set_permissions(&key, fs::Permissions::from_mode(0o644)).unwrap();
    let out = check(&filled(&dir, "client.toml", &client, &server, |s| s));
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("interface.private_key_file"), "{}", text(&out.stderr));
    let _ = fs::remove_dir_all(&dir);
}
