//! `uwsgi`: OpenKeel's API started from a magnum-api uWSGI ini ([`openkeel::uwsgi`]).

fn main() -> std::process::ExitCode {
    openkeel::uwsgi::main()
}
