//! The request context.
