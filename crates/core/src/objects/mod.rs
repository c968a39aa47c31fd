//! Domain types: one plain struct per Magnum table / versioned object.
