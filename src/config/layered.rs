//! Settings written at several levels (a case over its suite, a test over `[defaults]`): each is
//! its own value where it is set, else the level below's. The rule is written once, here; a struct
//! of settings applies it field by field.

/// A setting that a lower level fills in where this one leaves it unset.
pub(crate) trait Layered {
    /// This, with what it leaves unset taken from `base`.
    fn over(&self, base: &Self) -> Self;
}

impl<T: Clone> Layered for Option<T> {
    fn over(&self, base: &Self) -> Self {
        self.clone().or_else(|| base.clone())
    }
}

/// A list of both levels, this one's first (where each key of either was written).
impl<T: Clone> Layered for Vec<T> {
    fn over(&self, base: &Self) -> Self {
        self.iter().chain(base).cloned().collect()
    }
}

/// The method `over` (of visibility `$vis`) and [`Layered`] for a struct of settings, layering
/// every field; `@fields` is that layering alone, for a struct whose `over` first adjusts `base`. The
/// destructuring names every field, so one added to the struct and not here is a compile error, not
/// a setting silently dropped.
macro_rules! layered_fieldwise {
    (@fields $ty:ident { $($field:ident),* $(,)? } $own:expr, $base:expr) => {{
        let $ty { $($field),* } = $own;
        let base = $base;
        $ty { $($field: $crate::config::Layered::over($field, &base.$field)),* }
    }};
    ($vis:vis $ty:ident { $($field:ident),* $(,)? }) => {
        impl $ty {
            /// These settings, each unset one taken from `base`.
            $vis fn over(&self, base: &$ty) -> $ty {
                $crate::config::layered_fieldwise!(@fields $ty { $($field),* } self, base)
            }
        }

        impl $crate::config::Layered for $ty {
            fn over(&self, base: &Self) -> Self {
                $ty::over(self, base)
            }
        }
    };
}

pub(crate) use layered_fieldwise;
