//! OpenKeel front ends.
