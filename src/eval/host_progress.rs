//! The progress line: `hospes.progressus(linea)` redraws a transient status line at
//! most [`INTERVAL`] seconds apart (a training loop may call it every step: drawing
//! each one cost as much as a small model's step), and `hospes.progressus_finis(linea)`
//! writes the final report as an ordinary stderr line. The `Io` decides where the
//! transient line goes (a terminal only; `faber run` shows nothing on a pipe or file),
//! so on a non-terminal the final report is all that appears.

use std::cell::RefCell;
use std::sync::OnceLock;
use std::time::Instant;

use super::Io;

/// The shortest time between two drawn progress lines, in seconds (≤ 10 a second).
pub(crate) const INTERVAL: f64 = 0.1;

/// Admits a line when none was drawn yet or the last one is at least [`INTERVAL`] old;
/// the clock is passed in so the policy is tested without waiting.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    last: Option<f64>,
}

impl Throttle {
    /// Whether a line offered at `now` (seconds, monotonic) is drawn.
    pub(crate) fn admit(&mut self, now: f64) -> bool {
        match self.last {
            Some(t) if now - t < INTERVAL => false,
            _ => {
                self.last = Some(now);
                true
            }
        }
    }

    /// After a final report the next line is drawn at once.
    pub(crate) fn reset(&mut self) {
        self.last = None;
    }
}

thread_local! {
    static THROTTLE: RefCell<Throttle> = RefCell::new(Throttle::default());
}

fn now() -> f64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// `hospes.progressus`: the line goes to the `Io` unless one was drawn less than
/// [`INTERVAL`] ago.
pub(crate) fn progress(io: &mut dyn Io, line: &str) {
    if THROTTLE.with(|t| t.borrow_mut().admit(now())) {
        io.progress(line);
    }
}

/// `hospes.progressus_finis`: the final report, one stderr line (clearing a transient
/// line first, as any stderr output does), on a terminal or not.
pub(crate) fn final_report(io: &mut dyn Io, line: &str) {
    THROTTLE.with(|t| t.borrow_mut().reset());
    io.stderr(&format!("{line}\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_ten_lines_a_second() {
        let mut t = Throttle::default();
        // one offer per millisecond for two seconds: the first, then one every 100 ms
        let drawn: Vec<usize> = (0..2000)
            .filter(|&ms| t.admit(ms as f64 / 1000.0))
            .collect();
        assert_eq!(&drawn[..2], &[0, 100]);
        // every gap is 100 ms, or 101 where the decimal times round below 0.1 apart
        assert!(
            drawn
                .windows(2)
                .all(|w| (100..=101).contains(&(w[1] - w[0]))),
            "{drawn:?}"
        );
        assert!((19..=20).contains(&drawn.len()), "{drawn:?}");
    }

    #[test]
    fn slow_steps_are_all_drawn_and_reset_draws_at_once() {
        let mut t = Throttle::default();
        assert!(t.admit(0.0));
        assert!(t.admit(0.5));
        assert!(!t.admit(0.55));
        t.reset();
        assert!(t.admit(0.56));
    }
}
