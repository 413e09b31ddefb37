//! Panes' own choices. A pane keeps its filters and modes in one plain struct it defines (a
//! [`Choice`]), stored in the view state under the pane's id; the struct changes through one
//! generic command, [`Command::Choose`](super::command::Command::Choose), carrying a
//! [`ChoiceEdit`], which [`ViewState::apply`](super::state::ViewState::apply) applies to the
//! current value. A new pane with choices of its own adds no field to the state and no command.
//!
//! An edit is a function of the current value rather than a new value, so two edits of one
//! pane in the same frame (typing in one field, ticking a box) both count.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

/// A pane's choices: plain data with a default (what a newly opened profile shows).
pub trait Choice: Any + Clone + Debug + Default + PartialEq + Send + Sync {
    /// The owning pane's id: unique among choices.
    const ID: &'static str;
}

/// A stored choice, whatever its type.
trait Stored: Any + Debug + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn same(&self, other: &dyn Stored) -> bool;
}

impl<T: Choice> Stored for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same(&self, other: &dyn Stored) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
}

/// Every pane's choices, by pane id. A choice equal to its default is not stored, so two
/// states that show the same compare equal.
#[derive(Clone, Debug, Default)]
pub struct Choices(BTreeMap<&'static str, Arc<dyn Stored>>);

impl PartialEq for Choices {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|((ka, a), (kb, b))| ka == kb && a.same(b.as_ref()))
    }
}

impl Choices {
    /// The pane's choices (its default when it has none stored).
    pub fn get<T: Choice>(&self) -> T {
        self.0
            .get(T::ID)
            .and_then(|c| c.as_ref().as_any().downcast_ref::<T>())
            .cloned()
            .unwrap_or_default()
    }

    /// The pane's choices as text (what a table's rows depend on, for its page reset).
    pub fn key<T: Choice>(&self) -> String {
        format!("{:?}", self.get::<T>())
    }

    fn put<T: Choice>(&mut self, value: T) {
        if value == T::default() {
            self.0.remove(T::ID);
        } else {
            self.0.insert(T::ID, Arc::new(value));
        }
    }
}

/// One change to one pane's choices: what [`Command::Choose`](super::command::Command::Choose)
/// carries. Build it with [`ChoiceEdit::new`].
#[derive(Clone)]
pub struct ChoiceEdit {
    id: &'static str,
    edit: Arc<dyn Fn(&mut Choices) + Send + Sync>,
}

impl ChoiceEdit {
    /// An edit of `T`'s current value by `f`.
    pub fn new<T: Choice>(f: impl Fn(&mut T) + Send + Sync + 'static) -> ChoiceEdit {
        ChoiceEdit {
            id: T::ID,
            edit: Arc::new(move |choices: &mut Choices| {
                let mut value = choices.get::<T>();
                f(&mut value);
                choices.put(value);
            }),
        }
    }

    /// Applies it to `choices` (only [`ViewState::apply`](super::state::ViewState::apply)
    /// calls this).
    pub(crate) fn apply_to(&self, choices: &mut Choices) {
        (self.edit)(choices);
    }
}

impl Debug for ChoiceEdit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChoiceEdit({})", self.id)
    }
}

/// Two edits are equal when they are the same edit (a function has no other equality).
impl PartialEq for ChoiceEdit {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && Arc::ptr_eq(&self.edit, &other.edit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, Default, PartialEq)]
    struct Filter {
        text: String,
        on: bool,
    }

    impl Choice for Filter {
        const ID: &'static str = "test_filter";
    }

    fn apply(c: &mut Choices, edit: ChoiceEdit) {
        edit.apply_to(c);
    }

    #[test]
    fn two_edits_of_one_pane_in_a_frame_both_count() {
        let mut c = Choices::default();
        apply(
            &mut c,
            ChoiceEdit::new::<Filter>(|f| f.text = "matmul".into()),
        );
        apply(&mut c, ChoiceEdit::new::<Filter>(|f| f.on = true));
        assert_eq!(
            c.get::<Filter>(),
            Filter {
                text: "matmul".into(),
                on: true
            }
        );
    }

    #[test]
    fn a_choice_back_at_its_default_is_not_stored_so_states_compare_equal() {
        let mut c = Choices::default();
        apply(&mut c, ChoiceEdit::new::<Filter>(|f| f.on = true));
        assert_ne!(c, Choices::default());
        apply(&mut c, ChoiceEdit::new::<Filter>(|f| f.on = false));
        assert_eq!(c, Choices::default());
        assert_eq!(c.key::<Filter>(), format!("{:?}", Filter::default()));
    }
}
