//! Memory for the large tables: arrays on 2 MiB boundaries, backed by huge pages where the
//! kernel gives them ([`huge_pages`]).

pub mod huge_pages;
