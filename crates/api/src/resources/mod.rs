//! One module per Magnum resource: its routes, handlers and views.

pub mod certificates;
pub mod cluster_templates;
pub mod clusters;
pub mod federations;
pub mod mservices;
pub mod quotas;
pub mod stats;

/// Magnum's `NameGenerator().generate()` plus a suffix (`-cluster`, `-template`): a Greek
/// letter and a number from 1 to 24, `beta-7-cluster`.
pub(crate) fn generate_name(suffix: &str) -> String {
    const LETTERS: [&str; 24] = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi",
        "chi", "psi", "omega",
    ];
    let b = *uuid::Uuid::new_v4().as_bytes();
    let letter = LETTERS[usize::from(b[0]) % LETTERS.len()];
    let number = 1 + (usize::from(b[1]) % 24);
    format!("{letter}-{number}-{suffix}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_names() {
        let n = super::generate_name("template");
        assert!(n.ends_with("-template"));
        let num: u32 = n.split('-').nth(1).unwrap().parse().unwrap();
        assert!((1..=24).contains(&num));
    }
}
