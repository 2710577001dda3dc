//! The control socket: a Unix stream socket, readable only by the daemon's user (root), that
//! answers every connection with the daemon's status document (the JSON of `/status`) and
//! closes it. `braid tunnel status` reads it by default, as `wg show` reads WireGuard's, so the
//! status needs no network listener (`interface.metrics_listen` stays optional).
//!
//! The socket lives at `interface.control_socket` (by default `/run/braid/NAME.sock`). Its
//! folder is made with mode 0700 if missing and the socket gets mode 0600: only the owner can
//! connect. A socket file left by a daemon that died is replaced; one a running daemon answers
//! on is refused, naming the field. The file is removed when the daemon ends.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use crate::metrics::{Shared, Snapshot};

/// How long a reader may take to accept the document before the daemon gives up on it.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);

/// Why the control socket could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("interface.control_socket: {}: {detail}", path.display())]
    Open { path: PathBuf, detail: String },
    #[error(
        "interface.control_socket: {} is in use by a running daemon (stop it, or give this one \
         another control_socket)",
        path.display()
    )]
    InUse { path: PathBuf },
    #[error("reading status from {}: {detail}", path.display())]
    Read { path: PathBuf, detail: String },
}

/// The open control socket; removes its file when dropped.
#[derive(Debug)]
pub struct ControlSocket {
    path: PathBuf,
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Opens the control socket at `path` and answers it from `shared` on a thread of its own.
pub fn serve(path: &Path, shared: Shared) -> Result<ControlSocket, ControlError> {
    let open = |detail: String| ControlError::Open { path: path.to_path_buf(), detail };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| open(format!("creating {}: {e}", dir.display())))?;
    }
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            if UnixStream::connect(path).is_ok() {
                return Err(ControlError::InUse { path: path.to_path_buf() });
            }
            // Left by a daemon that is gone.
            fs::remove_file(path).map_err(|e| open(format!("removing a stale socket: {e}")))?;
        }
        Ok(_) => return Err(open("exists and is not a socket".into())),
        Err(_) => {}
    }
    let listener = UnixListener::bind(path).map_err(|e| open(e.to_string()))?;
    let socket = ControlSocket { path: path.to_path_buf() };
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .map_err(|e| open(format!("setting mode 0600: {e}")))?;
    thread::Builder::new()
        .name("braid-control".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let snap = shared.lock().map(|s| s.clone()).unwrap_or_default();
                let body = serde_json::to_string(&snap).unwrap_or_default();
                let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
                let _ = stream.write_all(body.as_bytes());
            }
        })
        .map_err(|e| open(e.to_string()))?;
    Ok(socket)
}

/// Reads a running daemon's status document from its control socket.
pub fn fetch_status(path: &Path) -> Result<Snapshot, ControlError> {
    let fail = |detail: String| ControlError::Read { path: path.to_path_buf(), detail };
    let mut stream = UnixStream::connect(path).map_err(|e| {
        let hint = match e.kind() {
            std::io::ErrorKind::PermissionDenied => " (the control socket is root's: run as root)",
            std::io::ErrorKind::NotFound => " (is the daemon running?)",
            _ => "",
        };
        fail(format!("{e}{hint}"))
    })?;
    stream.set_read_timeout(Some(WRITE_TIMEOUT)).map_err(|e| fail(e.to_string()))?;
    let mut body = String::new();
    stream.read_to_string(&mut body).map_err(|e| fail(e.to_string()))?;
    serde_json::from_str(&body).map_err(|e| fail(format!("not a status document: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("braid-control-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn shared(handshakes: u64) -> Shared {
        Arc::new(Mutex::new(Snapshot {
            interface: "braid0".into(),
            handshakes,
            ..Default::default()
        }))
    }

    #[test]
    fn answers_the_latest_status_to_its_owner_only_and_is_removed_on_drop() {
        let dir = temp("serve");
        let path = dir.join("run").join("braid0.sock");
        let state = shared(1);
        let socket = serve(&path, Arc::clone(&state)).unwrap();
        assert_eq!(fetch_status(&path).unwrap().handshakes, 1);
        state.lock().unwrap().handshakes = 2;
        assert_eq!(fetch_status(&path).unwrap().handshakes, 2, "the latest snapshot");
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700, "a folder it made");
        drop(socket);
        assert!(!path.exists());
        let err = fetch_status(&path).unwrap_err().to_string();
        assert!(err.contains("is the daemon running?"), "{err}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_live_socket_is_refused_and_a_stale_one_replaced() {
        let dir = temp("stale");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("braid0.sock");
        let _first = serve(&path, shared(1)).unwrap();
        let err = serve(&path, shared(2)).unwrap_err();
        assert!(matches!(err, ControlError::InUse { .. }), "{err}");
        assert!(err.to_string().starts_with("interface.control_socket:"), "{err}");
        // A socket file nobody listens on, as a killed daemon leaves it.
        drop(UnixListener::bind(dir.join("other.sock")).unwrap());
        let stale = dir.join("other.sock");
        let _socket = serve(&stale, shared(3)).unwrap();
        assert_eq!(fetch_status(&stale).unwrap().handshakes, 3);
        // Not a socket: refused, not deleted.
        let plain = dir.join("plain");
        fs::write(&plain, "x").unwrap();
        assert!(serve(&plain, shared(4)).unwrap_err().to_string().contains("not a socket"));
        assert!(plain.exists());
        let _ = fs::remove_dir_all(&dir);
    }
}
