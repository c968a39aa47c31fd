//! Scratch roots entered as containers (`unshare --pid --mount` + `chroot`): the host's
//! `/usr` bound in, an `/etc` of their own with a `magnum` user, `/usr/local/bin` holding
//! OpenKeel's programs under Magnum's names (and what a test adds), the test venv bound at its
//! path, a shared `/var/log/kolla`. Used by the kolla and OpenStack-Helm start-path tests.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const MAGNUM_UID: u32 = 42428;

fn bin(name: &str) -> PathBuf {
    // The integration test's own binaries (Cargo builds every [[bin]] of the package).
    let dir = PathBuf::from(env!("CARGO_BIN_EXE_openkeel-api"))
        .parent()
        .unwrap()
        .to_path_buf();
    dir.join(name)
}

pub use openkeel_tests::magnum::free_port;

pub fn write(path: &Path, text: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

pub fn copy(from: &Path, to: &Path, mode: u32) {
    let text = std::fs::read_to_string(from)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display()));
    write(to, &text, mode);
}

/// A scratch root laid out as the magnum images of kolla and OpenStack-Helm.
pub struct Root {
    pub dir: PathBuf,
    pub localbin: PathBuf,
    pub venv: PathBuf,
    /// kolla-ansible's `kolla_logs` volume, shared by every container (`/var/log/kolla`).
    pub logs: PathBuf,
}

impl Root {
    pub fn new(base: &Path, name: &str, venv: &Path) -> Root {
        let dir = base.join(name).join("root");
        let localbin = base.join(name).join("localbin");
        for d in [
            "usr",
            "proc",
            "dev",
            "etc",
            "tmp",
            "run",
            "var/lib/kolla/config_files",
            "var/log/kolla",
            "var/lib/magnum",
            "etc/magnum",
        ] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        std::fs::create_dir_all(dir.join(venv.strip_prefix("/").unwrap())).unwrap();
        for (link, to) in [
            ("bin", "usr/bin"),
            ("lib", "usr/lib"),
            ("lib64", "usr/lib64"),
            ("sbin", "usr/sbin"),
        ] {
            std::os::unix::fs::symlink(to, dir.join(link)).unwrap();
        }
        for f in [
            "hosts",
            "nsswitch.conf",
            "resolv.conf",
            "ld.so.cache",
            "host.conf",
        ] {
            let p = Path::new("/etc").join(f);
            if p.exists() {
                std::fs::copy(&p, dir.join("etc").join(f)).unwrap();
            }
        }
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
        write(
            &dir.join("etc/passwd"),
            &format!(
                "{passwd}magnum:x:{MAGNUM_UID}:{MAGNUM_UID}::/var/lib/magnum:/usr/sbin/nologin\n"
            ),
            0o644,
        );
        let group = std::fs::read_to_string("/etc/group").unwrap();
        write(
            &dir.join("etc/group"),
            &format!("{group}magnum:x:{MAGNUM_UID}:\n"),
            0o644,
        );
        std::os::unix::fs::chown(
            dir.join("var/lib/magnum"),
            Some(MAGNUM_UID),
            Some(MAGNUM_UID),
        )
        .unwrap();
        std::fs::create_dir_all(&localbin).unwrap();
        // The image's Python (kolla's set_configs.py needs PyYAML).
        std::os::unix::fs::symlink(venv.join("bin/python3"), localbin.join("python3")).unwrap();
        // OpenKeel under Magnum's names, as the image installs them.
        for b in [
            "magnum-api",
            "magnum-conductor",
            "magnum-db-manage",
            "magnum-status",
            "uwsgi",
        ] {
            let from = bin(b);
            if from.exists() {
                std::fs::hard_link(&from, localbin.join(b))
                    .or_else(|_| std::fs::copy(&from, localbin.join(b)).map(|_| ()))
                    .unwrap();
            }
        }
        let logs = base.join("kolla_logs");
        std::fs::create_dir_all(&logs).unwrap();
        Root {
            dir,
            localbin,
            venv: venv.to_path_buf(),
            logs,
        }
    }

    /// `unshare --pid --mount` + the root's mounts + `chroot` + `command` (in the
    /// container's environment).
    pub fn command(&self, env: &[(&str, &str)], command: &[&str]) -> Command {
        let r = self.dir.display();
        let script = format!(
            "set -e\n\
             mount --bind /usr {r}/usr\n\
             mount --bind {lb} {r}/usr/local/bin\n\
             mount --bind /dev {r}/dev\n\
             mount -t proc proc {r}/proc\n\
             mount --bind {venv} {r}{venv}\n\
             mount --bind {logs} {r}/var/log/kolla\n\
             exec chroot {r} \"$@\"\n",
            lb = self.localbin.display(),
            venv = self.venv.display(),
            logs = self.logs.display(),
        );
        let mut cmd = openkeel_tests::helper_blocking("unshare");
        cmd.args([
            "--pid",
            "--fork",
            "--kill-child",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            &script,
            "container",
        ]);
        cmd.args([
            "/usr/bin/env",
            "-i",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "HOME=/var/lib/magnum",
            "LANG=C.UTF-8",
        ]);
        for (k, v) in env {
            cmd.arg(format!("{k}={v}"));
        }
        cmd.args(command);
        cmd
    }

    /// A file of the `kolla_logs` volume (`/var/log/kolla/...`).
    pub fn log_file(&self, path: &str) -> PathBuf {
        self.logs.join(path.trim_start_matches("/var/log/kolla/"))
    }
}

/// A running container: its process group is ended when dropped.
pub struct Container {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Container {
    /// Start `command` in the container with `env`; output to `<log_dir>/<name>.out`.
    pub fn start(
        root: &Root,
        name: &str,
        env: &[(&str, &str)],
        command: &[&str],
        log_dir: &Path,
    ) -> Container {
        let log = log_dir.join(format!("{name}.out"));
        let out = std::fs::File::create(&log).unwrap();
        let child = root
            .command(env, command)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("unshare");
        Container {
            name: name.to_string(),
            child,
            log,
        }
    }

    /// The container's first process (pid 1 inside), as the host sees it.
    pub fn inner_pid(&self) -> Option<u32> {
        let pid = self.child.id();
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
        children.split_whitespace().next()?.parse().ok()
    }

    /// Run `command` inside the container (its mount and PID namespaces and root), as
    /// kolla's healthchecks run (`docker exec`); returns (success, output).
    pub fn exec(&self, command: &[&str]) -> (bool, String) {
        let Some(pid) = self.inner_pid() else {
            return (false, "container not running".into());
        };
        let out = Command::new("nsenter")
            .args([
                "--target",
                &pid.to_string(),
                "--mount",
                "--pid",
                "--root",
                "--wd",
            ])
            .args(["/usr/bin/env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin"])
            .args(command)
            .output()
            .expect("nsenter");
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    pub fn log(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut s);
        }
        s
    }

    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Wait until `check` passes inside the container (bounded).
    pub fn wait_for(&mut self, what: &str, command: &[&str], timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exited() {
                panic!(
                    "{} exited ({status}) before {what} passed:\n{}",
                    self.name,
                    self.log()
                );
            }
            let (ok, out) = self.exec(command);
            if ok {
                return out;
            }
            if Instant::now() > deadline {
                panic!(
                    "{what} did not pass in {timeout:?}: {out}\n--- {} output:\n{}",
                    self.name,
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let pid = self.child.id();
        let _ = Command::new("kill")
            .args(["-TERM", "--", &format!("-{pid}")])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.exited().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        if self.exited().is_none() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
            let _ = self.child.wait();
        }
        if std::thread::panicking() {
            eprintln!("--- {} output:\n{}", self.name, self.log());
        }
    }
}

/// host, port, user, password of an `amqp://` or `mysql://` URL.
pub fn url_parts(url: &str) -> (String, u16, String, String) {
    let rest = url.split_once("://").unwrap().1;
    let (creds, hostport) = rest.split_once('@').unwrap();
    let hostport = hostport.split('/').next().unwrap();
    let (user, pass) = creds.split_once(':').unwrap();
    let (host, port) = hostport.rsplit_once(':').unwrap();
    (
        host.to_string(),
        port.parse().unwrap(),
        user.to_string(),
        pass.to_string(),
    )
}
