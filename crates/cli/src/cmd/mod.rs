//! One module per subcommand.

pub mod av;
pub mod bench;
pub mod bools;
pub mod bsm;
pub mod check;
pub mod demo;
pub mod diff;
pub mod info;
pub mod label;
pub mod landlock;
pub mod search;
pub mod why;
