//! `magnum.conf` loading with oslo.config rules and one typed struct per section.
