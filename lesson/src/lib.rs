//! What several chapter crates share, kept in one place: a [`Trace`] of the shapes of a
//! computation, [`panic_message`] to show what a mistake reports, and [`assert_close`] for
//! tests that compare with hand-derived numbers; [`wrap`] breaks a printed line to the
//! [`COLUMNS`] of the book's code blocks; [`prose`] and [`decimals`] read a page in its
//! tests.

mod close;
mod machine;
mod page;
mod panic;
mod trace;
mod wrap;

pub use close::assert_close;
pub use machine::cpu_name;
pub use page::{assert_quoted, decimals, prose};
pub use panic::panic_message;
pub use trace::{Step, Trace};
pub use wrap::{COLUMNS, wrap};
