//! Enums that configs name: one table of `Variant => "name"` pairs gives each its `NAMES`,
//! `as_str`, `FromStr` and `Display`, so no name is spelled twice.

/// An unknown algorithm or scheduler name; lists what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {given:?}; expected one of: {}", allowed.join(", "))]
pub struct UnknownName {
    pub what: &'static str,
    pub given: String,
    pub allowed: &'static [&'static str],
}

/// Declares an enum whose variants configs name, from one table:
///
/// ```
/// braid_core::named_enum! {
///     /// A colour, as configs name it.
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub enum Colour {
///         what = "colour";
///         /// Documented variants keep their docs.
///         Red => "red",
///         Green => "green" | "vert",
///     }
/// }
/// assert_eq!(Colour::NAMES.to_vec(), ["red", "green"]);
/// assert_eq!(Colour::Green.as_str(), "green");
/// assert_eq!("vert".parse::<Colour>(), Ok(Colour::Green));
/// assert_eq!(Colour::Red.to_string(), "red");
/// assert_eq!(
///     "blue".parse::<Colour>().unwrap_err().to_string(),
///     "unknown colour \"blue\"; expected one of: red, green"
/// );
/// ```
///
/// It implements `NAMES` (every first name, in declaration order), `as_str` (the first name),
/// `FromStr` (any name, aliases after `|` included; otherwise an [`UnknownName`] that says
/// `what` was unknown) and `Display` (the first name). Attributes on the enum and its variants,
/// docs and `#[default]` included, are kept.
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            what = $what:literal;
            $(
                $(#[$vmeta:meta])*
                $variant:ident => $first:literal $(| $alias:literal)*
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant,
            )+
        }

        impl $name {
            /// Every name, in declaration order (aliases accepted by `from_str` excluded).
            pub const NAMES: &'static [&'static str] = &[$($first),+];

            /// The name configs use.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $first,)+
                }
            }
        }

        impl ::core::str::FromStr for $name {
            type Err = $crate::names::UnknownName;
            fn from_str(s: &str) -> ::core::result::Result<Self, Self::Err> {
                match s {
                    $($first $(| $alias)* => Ok($name::$variant),)+
                    _ => Err($crate::names::UnknownName {
                        what: $what,
                        given: s.to_string(),
                        allowed: Self::NAMES,
                    }),
                }
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(match self {
                    $($name::$variant => $first,)+
                })
            }
        }
    };
}
