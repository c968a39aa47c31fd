//! Embeds the addon charts (`charts/`) in the driver: `CHART_FILES` lists every file with its
//! path relative to `charts/` and its bytes, so a deployment needs no chart directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs, io};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if e.file_type()?.is_dir() {
            walk(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

fn main() -> io::Result<()> {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").map_err(io::Error::other)?);
    let charts = root.join("charts");
    println!("cargo:rerun-if-changed=charts");
    let mut files = Vec::new();
    walk(&charts, &mut files)?;
    let mut src = String::from("pub static CHART_FILES: &[(&str, &[u8])] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f.strip_prefix(&charts).map_err(io::Error::other)?;
        let rel = rel.to_string_lossy().replace('\\', "/");
        writeln!(
            src,
            "    ({rel:?}, include_bytes!({:?})),",
            f.display().to_string()
        )
        .map_err(io::Error::other)?;
    }
    src.push_str("];\n");
    let out = PathBuf::from(env::var("OUT_DIR").map_err(io::Error::other)?).join("charts.rs");
    fs::write(out, src)
}
