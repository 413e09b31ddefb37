//! PyTorch profiler traces, one module a job:
//!
//! - [`trace`]: the importer (discovery of a trace's devices, a rank per device, the whole
//!   read's ops, stacks and steps);
//! - [`memory_scan`]: the first look, a parallel byte search for the `[memory]` events;
//! - [`memory_event`]: the scan's reader of one event (one pass, or a template of PyTorch's
//!   layout);
//! - [`memory_fields`]: the memory event's fields, one table that both of those and the whole
//!   read's event reader ([`crate::ingest::trace_view`]) take their keys from.

pub mod memory_event;
pub mod memory_fields;
pub mod memory_scan;
pub mod trace;
