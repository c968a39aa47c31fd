//! The option tables, one `config_section!` per section, grouped by origin. The help texts
//! are Magnum's and the oslo libraries' (first paragraph), with notes where OpenKeel or
//! Magnum's run-time defaults differ from the library's.
//!
//! The doc comments are the help texts printed in the sample file, kept as the libraries
//! write them (`[DEFAULT]`, `<port>`, bare URLs), so rustdoc's markup lints are off here.
#![allow(
    rustdoc::broken_intra_doc_links,
    rustdoc::invalid_html_tags,
    rustdoc::bare_urls
)]

mod capi;
mod clients;
mod default;
mod keystone;
mod magnum;
mod openkeel;
mod oslo;

pub use capi::*;
pub use clients::*;
pub use default::*;
pub use keystone::*;
pub use magnum::*;
pub use openkeel::*;
pub use oslo::*;

/// What every table file needs: the macro and the option constructors.
mod prelude {
    pub(super) use crate::config::spec::{
        boolean, config_section, dep, dep_group, float, float_unset, host_address_unset, integer,
        integer_unset, ip_address, list, list_unset, multi, port, string, string_unset,
    };
}
