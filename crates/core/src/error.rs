//! The error catalogue.
