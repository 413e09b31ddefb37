//! The one job runner: every piece of work the app does off the UI thread (loading, building a
//! Group By's curves, sorting a column, reducing lines, dialogs, exports) is started here.
//!
//! A job has a [`JobKey`], named by the module that starts it ([`JobKind`]): starting a job under a key that is already running cancels the
//! running one, so a superseded reduction or load never lands. A job reports through its
//! [`Job`] handle (one or more messages), sees cancellation and reports progress through its
//! [`JobControl`], and wakes the UI after each message. Dropping a handle cancels its job.
//!
//! A job that panics does not take the app down: the panic is caught where the job runs (on its
//! thread, or on rayon's pool, whose default would abort the process), the job ends as failed
//! with the panic's message ([`Poll::Failed`], [`Job::failure`]), and the runner keeps the
//! message for the app to show ([`Jobs::take_failures`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use crate::ingest::LoadControl;
use crate::ui::i18n::{Text, Tr};

/// A kind of job, named by the module that starts it: a stable id, and what it does in both
/// languages (a failure names it). Kinds compare by id.
#[derive(Debug, Clone, Copy)]
pub struct JobKind {
    /// Unique among kinds: `"load"`, `"series"`, …
    pub id: &'static str,
    /// What the job does, as a failure's message says it.
    pub task: Text,
}

impl JobKind {
    /// The kind `id`, whose task is `en` in English and `zh` in Chinese.
    pub const fn new(id: &'static str, en: &'static str, zh: &'static str) -> JobKind {
        JobKind {
            id,
            task: Text { en, zh },
        }
    }
}

impl PartialEq for JobKind {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for JobKind {}

impl std::hash::Hash for JobKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

/// Jobs that tests and one-off work start ([`JobKey::named`]).
pub const NAMED_JOB: JobKind = JobKind::new("named", "a task", "任务");

/// What a job is for; at most one job runs per key. A key is a [`JobKind`] and, for kinds that
/// run once per view or column, a scope ([`JobKey::scoped`]): a new job of the same kind and
/// scope cancels the running one, another scope runs beside it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JobKey {
    kind: JobKind,
    scope: u64,
}

impl JobKey {
    /// The key of `kind`'s job (one at a time).
    pub const fn new(kind: JobKind) -> JobKey {
        JobKey { kind, scope: 0 }
    }

    /// The key of `kind`'s job for `scope` (one at a time per scope: a view, a column, …).
    pub fn scoped(kind: JobKind, scope: &impl std::hash::Hash) -> JobKey {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        // Fixed keys: the same scope is the same key for the whole run.
        let scope = BuildHasherDefault::<DefaultHasher>::default().hash_one(scope);
        JobKey { kind, scope }
    }

    /// A job named by its text (tests, one-off work).
    pub fn named(name: &str) -> JobKey {
        JobKey::scoped(NAMED_JOB, &name)
    }

    /// What the job does, in the user's language (a failure names it).
    pub fn task_name(&self, t: &Tr) -> &'static str {
        self.kind.task.get(t)
    }
}

/// Where a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A thread of its own: for work that blocks (files, dialogs) or runs long.
    Thread,
    /// rayon's pool: for short CPU work that should not wait for a thread to start.
    Pool,
}

/// Cancellation and progress of one job (the byte counters are the loader's).
#[derive(Debug, Default)]
pub struct JobControl {
    /// Bytes and files read, and the cancel flag the loader polls.
    pub progress: LoadControl,
    done: AtomicBool,
    /// The panic's message, when the job panicked.
    failure: OnceLock<String>,
}

impl JobControl {
    /// Asks the job to stop; a job not yet started never starts.
    pub fn cancel(&self) {
        self.progress.cancel();
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.progress.is_cancelled()
    }

    /// True once the job's function has returned, panicked, or never ran.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// The panic's message, when the job panicked.
    pub fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }
}

/// A job that panicked: what it was for and the panic's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFailure {
    /// The job's key.
    pub key: JobKey,
    /// The panic's message (its payload when it is text).
    pub message: String,
}

/// The text of a panic's payload (`panic!` with a message gives a `&str` or a `String`).
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// A function that wakes the UI.
type WakeFn = Arc<dyn Fn() + Send + Sync>;

/// Wakes the UI (a repaint request) when a job has something to say; does nothing until the
/// app has an egui context (tests that drive the app without one poll, or set their own).
#[derive(Clone, Default)]
pub struct Waker(Arc<OnceLock<WakeFn>>);

impl Waker {
    /// Asks for a repaint, if there is a context.
    pub fn wake(&self) {
        if let Some(f) = self.0.get() {
            f();
        }
    }
}

/// What a job uses to send its messages.
pub struct Reporter<T> {
    tx: Sender<T>,
    waker: Waker,
}

impl<T> Reporter<T> {
    /// Sends a message to the job's handle and wakes the UI; false when nobody listens.
    pub fn send(&self, msg: T) -> bool {
        let sent = self.tx.send(msg).is_ok();
        self.waker.wake();
        sent
    }
}

/// What [`Job::poll`] found.
pub enum Poll<T> {
    /// A message.
    Msg(T),
    /// Nothing yet; the job still runs.
    Pending,
    /// The job panicked: its message (said once; [`Poll::Finished`] after it).
    Failed(String),
    /// The job is over and has nothing more to say.
    Finished,
}

/// The handle of a started job.
pub struct Job<T> {
    key: JobKey,
    rx: Receiver<T>,
    control: Arc<JobControl>,
    /// Why the job could not start (no thread), if it could not.
    pub start_error: Option<String>,
    /// Its failure was reported by [`Job::poll`].
    failure_said: std::cell::Cell<bool>,
}

impl<T> Job<T> {
    /// Its key.
    pub fn key(&self) -> &JobKey {
        &self.key
    }

    /// Its control (progress, cancel).
    pub fn control(&self) -> &JobControl {
        &self.control
    }

    /// The next message, if any; once the messages are taken, the job's panic if it panicked.
    pub fn poll(&self) -> Poll<T> {
        match self.rx.try_recv() {
            Ok(m) => Poll::Msg(m),
            Err(TryRecvError::Empty) => Poll::Pending,
            Err(TryRecvError::Disconnected) => match self.control.failure() {
                Some(f) if !self.failure_said.replace(true) => Poll::Failed(f.to_string()),
                _ => Poll::Finished,
            },
        }
    }

    /// The panic's message, when the job panicked.
    pub fn failure(&self) -> Option<&str> {
        self.control.failure()
    }

    /// Waits for the next message; `None` once the job is over (tests, headless runs).
    pub fn wait(&self) -> Option<T> {
        self.rx.recv().ok()
    }
}

impl<T> Drop for Job<T> {
    fn drop(&mut self) {
        self.control.cancel();
    }
}

/// A point where the jobs of one key wait before they start, until the gate is opened or the
/// job is cancelled: lets a test look at a job that is certainly still running (a load to
/// cancel, an overview before its first rank), whatever the machine's speed. Set with
/// [`Jobs::gate`]; the app never sets one.
#[derive(Clone, Default)]
pub struct JobGate(Arc<(Mutex<bool>, Condvar)>);

impl JobGate {
    /// Lets every job waiting at the gate, and every later one, go on.
    pub fn open(&self) {
        let (open, changed) = &*self.0;
        if let Ok(mut o) = open.lock() {
            *o = true;
        }
        changed.notify_all();
    }

    /// Waits until the gate is open or `ctl` is cancelled (looked at every few milliseconds:
    /// a cancel does not signal the gate).
    fn pass(&self, ctl: &JobControl) {
        let (open, changed) = &*self.0;
        let Ok(mut o) = open.lock() else { return };
        while !*o && !ctl.is_cancelled() {
            match changed.wait_timeout(o, std::time::Duration::from_millis(2)) {
                Ok((guard, _)) => o = guard,
                Err(_) => return,
            }
        }
    }
}

/// The runner: starts jobs and knows which keys are running.
#[derive(Default)]
pub struct Jobs {
    running: HashMap<JobKey, Arc<JobControl>>,
    /// Gates set by tests, by key.
    gates: HashMap<JobKey, JobGate>,
    waker: Waker,
    /// Jobs that panicked, until the app takes them.
    failures: Arc<Mutex<Vec<JobFailure>>>,
}

impl Jobs {
    /// A runner whose jobs call `wake` after each message (tests; the app uses
    /// [`Self::set_context`]).
    pub fn with_wake(wake: impl Fn() + Send + Sync + 'static) -> Jobs {
        let jobs = Jobs::default();
        let _ = jobs.waker.0.set(Arc::new(wake));
        jobs
    }

    /// Lets jobs wake the UI from now on (the first context or wake function set stays).
    pub fn set_context(&self, ctx: &egui::Context) {
        let ctx = ctx.clone();
        let _ = self.waker.0.set(Arc::new(move || ctx.request_repaint()));
    }

    /// Makes the jobs started under `key` from now on wait before they run until the returned
    /// gate is opened (or the job is cancelled). For tests.
    pub fn gate(&mut self, key: JobKey) -> JobGate {
        self.gates.entry(key).or_default().clone()
    }

    /// Starts `work` under `key` (cancelling a job running under it); `work` sends any number
    /// of messages through its [`Reporter`].
    pub fn start<T: Send + 'static>(
        &mut self,
        key: JobKey,
        place: Place,
        work: impl FnOnce(&JobControl, &Reporter<T>) + Send + 'static,
    ) -> Job<T> {
        self.running.retain(|_, c| !c.is_done());
        if let Some(old) = self.running.remove(&key) {
            old.cancel();
        }
        let control = Arc::new(JobControl::default());
        let (tx, rx) = channel();
        let reporter = Reporter {
            tx,
            waker: self.waker.clone(),
        };
        let ctl = Arc::clone(&control);
        let failures = Arc::clone(&self.failures);
        let job_key = key.clone();
        let gate = self.gates.get(&key).cloned();
        let task = move || {
            if let Some(g) = gate {
                g.pass(&ctl);
            }
            if !ctl.is_cancelled() {
                // A panic ends this job only: caught here, it never reaches rayon (which would
                // abort the process) nor leaves the job "running" forever.
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    work(&ctl, &reporter);
                }));
                if let Err(payload) = run {
                    let message = panic_text(payload.as_ref());
                    let _ = ctl.failure.set(message.clone());
                    if let Ok(mut f) = failures.lock() {
                        f.push(JobFailure {
                            key: job_key,
                            message,
                        });
                    }
                }
            }
            ctl.done.store(true, Ordering::Release);
            // The channel closes before the wake, so the woken UI sees the job as over.
            let waker = reporter.waker.clone();
            drop(reporter);
            waker.wake();
        };
        let mut start_error = None;
        match place {
            Place::Pool => rayon::spawn(task),
            Place::Thread => {
                if let Err(e) = std::thread::Builder::new()
                    .name(format!("memsight-{key:?}").chars().take(15).collect())
                    .spawn(task)
                {
                    control.done.store(true, Ordering::Release);
                    start_error = Some(format!("cannot start a worker thread: {e}"));
                }
            }
        }
        self.running.insert(key.clone(), Arc::clone(&control));
        Job {
            key,
            rx,
            control,
            start_error,
            failure_said: std::cell::Cell::new(false),
        }
    }

    /// Starts `work` under `key`; its return value is the job's one message.
    pub fn run<T: Send + 'static>(
        &mut self,
        key: JobKey,
        place: Place,
        work: impl FnOnce(&JobControl) -> T + Send + 'static,
    ) -> Job<T> {
        self.start(key, place, move |ctl, out| {
            out.send(work(ctl));
        })
    }

    /// True while a job runs under `key`.
    pub fn is_running(&self, key: &JobKey) -> bool {
        self.running.get(key).is_some_and(|c| !c.is_done())
    }

    /// How many jobs run now.
    pub fn running_count(&self) -> usize {
        self.running.values().filter(|c| !c.is_done()).count()
    }

    /// The jobs that panicked since the last call, oldest first.
    pub fn take_failures(&self) -> Vec<JobFailure> {
        self.failures
            .lock()
            .map(|mut f| std::mem::take(&mut *f))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST_A: JobKind = JobKind::new("a", "a", "a");
    const TEST_B: JobKind = JobKind::new("b", "b", "b");
    const TEST_C: JobKind = JobKind::new("c", "c", "c");

    #[test]
    fn a_gated_job_waits_until_the_gate_opens_or_it_is_cancelled() {
        let mut jobs = Jobs::default();
        let gate = jobs.gate(JobKey::new(TEST_A));
        let ran = Arc::new(AtomicBool::new(false));
        let r = Arc::clone(&ran);
        let cancelled = jobs.run(JobKey::new(TEST_A), Place::Thread, move |_| {
            r.store(true, Ordering::SeqCst)
        });
        assert!(jobs.is_running(&JobKey::new(TEST_A)));
        cancelled.control().cancel();
        assert_eq!(
            cancelled.wait(),
            None,
            "cancelled at the gate: it never ran"
        );
        assert!(!ran.load(Ordering::SeqCst));
        let held = jobs.run(JobKey::new(TEST_A), Place::Thread, |_| 1);
        assert!(matches!(held.poll(), Poll::Pending));
        gate.open();
        assert_eq!(held.wait(), Some(1));
        // Other keys never wait.
        assert_eq!(
            jobs.run(JobKey::new(TEST_B), Place::Pool, |_| 2).wait(),
            Some(2)
        );
    }

    #[test]
    fn a_job_sends_and_finishes() {
        let mut jobs = Jobs::default();
        let job = jobs.run(JobKey::named("sum"), Place::Thread, |_| 2 + 2);
        assert_eq!(job.wait(), Some(4));
        assert_eq!(job.wait(), None);
        assert!(job.control().is_done());
        assert!(!jobs.is_running(&JobKey::named("sum")));
    }

    #[test]
    fn a_scoped_job_cancels_only_the_job_of_its_own_scope() {
        let mut jobs = Jobs::with_wake(|| {});
        let gate = jobs.gate(JobKey::scoped(TEST_A, &1));
        let one = jobs.run(JobKey::scoped(TEST_A, &1), Place::Thread, |ctl| {
            ctl.is_cancelled()
        });
        let two = jobs.run(JobKey::scoped(TEST_A, &2), Place::Thread, |_| 2);
        // Another scope of the same kind runs beside it.
        assert_eq!(two.wait(), Some(2));
        assert!(!one.control().is_cancelled());
        // The same kind and scope cancels it; the kind names the task either way.
        let again = jobs.run(JobKey::scoped(TEST_A, &1), Place::Thread, |_| 3);
        assert!(one.control().is_cancelled());
        gate.open();
        assert_eq!(again.wait(), Some(3));
        assert_eq!(
            JobKey::scoped(TEST_A, &7).task_name(&crate::ui::i18n::ZH),
            "a"
        );
        assert_eq!(NAMED_JOB.task.get(&crate::ui::i18n::ZH), "任务");
        assert_eq!(JobKey::named("x").task_name(&crate::ui::i18n::EN), "a task");
    }

    #[test]
    fn a_new_job_under_a_running_key_cancels_the_old_one() {
        let mut jobs = Jobs::default();
        let (go_tx, go_rx) = channel::<()>();
        let (started_tx, started_rx) = channel::<()>();
        let old = jobs.start(JobKey::new(TEST_C), Place::Thread, move |ctl, out| {
            let _ = started_tx.send(());
            let _ = go_rx.recv();
            out.send(ctl.is_cancelled());
        });
        started_rx.recv().unwrap();
        assert!(jobs.is_running(&JobKey::new(TEST_C)));
        let new = jobs.run(JobKey::new(TEST_C), Place::Thread, |ctl| ctl.is_cancelled());
        go_tx.send(()).unwrap();
        assert_eq!(old.wait(), Some(true), "the old job saw its cancel");
        assert_eq!(new.wait(), Some(false));
        // Another key is left alone.
        let other = jobs.run(JobKey::new(TEST_B), Place::Pool, |_| 7);
        assert_eq!(other.wait(), Some(7));
    }

    #[test]
    fn a_job_cancelled_before_it_starts_never_runs() {
        let mut jobs = Jobs::default();
        // Occupy rayon's pool so the next pool job waits in the queue.
        let (go_tx, go_rx) = channel::<()>();
        let threads = rayon::current_num_threads();
        let go_rx = Arc::new(Mutex::new(go_rx));
        let blockers: Vec<Job<()>> = (0..threads)
            .map(|i| {
                let rx = Arc::clone(&go_rx);
                jobs.run(
                    JobKey::named(&format!("block {i}")),
                    Place::Pool,
                    move |_| {
                        let _ = rx.lock().map(|r| r.recv());
                    },
                )
            })
            .collect();
        let ran = Arc::new(AtomicBool::new(false));
        let r = Arc::clone(&ran);
        let queued = jobs.run(JobKey::new(TEST_C), Place::Pool, move |_| {
            r.store(true, Ordering::SeqCst)
        });
        drop(queued);
        for _ in 0..threads {
            go_tx.send(()).unwrap();
        }
        drop(blockers);
        while jobs.running_count() > 0 {
            std::thread::yield_now();
        }
        assert!(!ran.load(Ordering::SeqCst));
    }

    /// A panic in a job of either place ends that job as failed, with its message, and the
    /// runner goes on: the process is not aborted (rayon's default for a pool job), the job is
    /// not left running, and the next job under the same key runs.
    #[test]
    fn a_panicking_job_fails_with_its_message_and_the_runner_goes_on() {
        for place in [Place::Pool, Place::Thread] {
            let mut jobs = Jobs::default();
            let key = JobKey::named(&format!("boom {place:?}"));
            let job: Job<u32> = jobs.run(key.clone(), place, move |_| panic!("boom in {place:?}"));
            assert_eq!(job.wait(), None, "a panicking job sends nothing");
            while !job.control().is_done() {
                std::thread::yield_now();
            }
            let want = format!("boom in {place:?}");
            assert_eq!(job.failure(), Some(want.as_str()));
            assert!(matches!(job.poll(), Poll::Failed(m) if m == want));
            assert!(matches!(job.poll(), Poll::Finished), "said once");
            assert!(!jobs.is_running(&key));
            assert_eq!(
                jobs.take_failures(),
                vec![JobFailure {
                    key: key.clone(),
                    message: want.clone()
                }]
            );
            assert!(jobs.take_failures().is_empty(), "taken once");
            let next = jobs.run(key, place, |_| 5);
            assert_eq!(next.wait(), Some(5));
            assert_eq!(next.failure(), None);
        }
    }

    #[test]
    fn dropping_the_handle_cancels_the_job() {
        let mut jobs = Jobs::default();
        let (go_tx, go_rx) = channel::<()>();
        let (seen_tx, seen_rx) = channel::<bool>();
        let job = jobs.start(
            JobKey::named("drop"),
            Place::Thread,
            move |ctl, _: &Reporter<()>| {
                let _ = seen_tx.send(ctl.is_cancelled());
                let _ = go_rx.recv();
                let _ = seen_tx.send(ctl.is_cancelled());
            },
        );
        assert_eq!(seen_rx.recv(), Ok(false), "running, not cancelled yet");
        drop(job);
        go_tx.send(()).unwrap();
        assert_eq!(seen_rx.recv(), Ok(true));
    }
}
