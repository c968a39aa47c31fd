//! OpenKeel cloud look-ups.
