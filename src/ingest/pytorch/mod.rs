//! PyTorch profiler traces, one module a job:
//!
//! - [`trace`]: the importer (discovery of a trace's devices, a rank per device, the whole
//!   read's ops, stacks and steps);
//! - [`memory_scan`]: the first look, a parallel byte search for the `[memory]` events;
//! - [`memory_event`]: the scan's reader of one event (one pass, or a template of PyTorch's
//!   layout);
//! - `json_cursor`: the cursor both hand-written readers ([`memory_event`], `op_event`)
//!   walk an object with;
//! - `op_event`: the whole read's reader of one `cpu_op` event of the plain layout;
//! - [`memory_fields`]: the memory event's fields, one table that both of those and the whole
//!   read's event reader ([`crate::ingest::trace_view`]) take their keys from.

pub(crate) mod json_cursor;
pub mod memory_event;
pub mod memory_fields;
pub mod memory_scan;
pub(crate) mod op_event;
pub mod trace;
