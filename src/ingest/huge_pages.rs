//! Big lists backed by 2 MiB pages where the OS offers them.
//!
//! A load fills hundreds of MiB of fresh lists (an msMemScope dump's events); on Linux each
//! 4 KiB page of them is a fault, a zeroing and a TLB entry. Linux hands out 2 MiB pages to
//! memory marked for them (`madvise(MADV_HUGEPAGE)`, transparent huge pages in their
//! default `madvise` mode): one fault each. The mark is advice only: contents, sizes and
//! the allocator's bookkeeping do not change, and elsewhere (or when the kernel declines) it
//! does nothing (as it does where huge pages are bigger than 2 MiB: arm64 kernels with 64 KiB
//! pages have 512 MiB ones). Hand-written: no crate marks one `Vec`'s room; a process-wide
//! mark (glibc's `hugetlb` tunable) made the PyTorch reader no faster, so only the lists
//! measured to gain are marked. On a VM that hands free memory back to its host (virtio's
//! free page reporting), a 2 MiB page after idle is one the host took back and must fault in
//! again, 512 of its pages: there a 1 GB dump's load lost ~0.2 s to the mark and a program
//! touching 360 MiB of 2 MiB pages took 1.0 s against 0.19 s with 4 KiB ones
//! (docs/performance.md, rounds 25 and 26). No list is marked where the kernel reports free
//! pages ([`worth_it`]).

use std::path::Path;
use std::sync::OnceLock;

/// Below this much room a list is not marked: a 2 MiB page must fit inside it, aligned.
const MIN_BYTES: usize = 4 << 20;

/// Marks the room of `list` (its capacity, used or not) for 2 MiB pages, where the OS offers
/// them; call it after reserving and before filling, as pages already touched stay 4 KiB.
pub(crate) fn advise<T>(list: &Vec<T>) {
    let bytes = list.capacity().saturating_mul(size_of::<T>());
    if bytes < MIN_BYTES || !worth_it() {
        return;
    }
    mark(list.as_ptr().cast(), bytes);
}

/// Whether 2 MiB pages are worth asking for in this process: not where the kernel hands
/// free memory back to its hypervisor (looked up once).
fn worth_it() -> bool {
    static WORTH_IT: OnceLock<bool> = OnceLock::new();
    *WORTH_IT.get_or_init(|| !reports_free_pages(Path::new(VIRTIO_DEVICES)))
}

/// Where Linux lists the virtio devices of a VM.
const VIRTIO_DEVICES: &str = "/sys/bus/virtio/devices";

/// Whether a virtio memory balloon under `devices` (a `/sys/bus/virtio/devices`) reports
/// free pages to the host: its `device` is 5 and its `features` (one `0`/`1` per feature
/// bit, bit 0 first) has bit 5 (`VIRTIO_BALLOON_F_REPORTING`) set. False when there are
/// none or they cannot be read (no VM, not Linux).
fn reports_free_pages(devices: &Path) -> bool {
    const BALLOON: u32 = 5;
    const REPORTING: usize = 5;
    let Ok(entries) = std::fs::read_dir(devices) else {
        return false;
    };
    entries.flatten().any(|d| {
        let read = |name: &str| std::fs::read_to_string(d.path().join(name)).unwrap_or_default();
        let id = read("device");
        let id = id.trim();
        let is_balloon = id
            .strip_prefix("0x")
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            == Some(BALLOON);
        is_balloon && read("features").as_bytes().get(REPORTING) == Some(&b'1')
    })
}

/// Marks the 2 MiB-aligned stretches inside `bytes` bytes at `start` (none outside them: the
/// pages around an allocation may be another's).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // one madvise on our own allocation: no safe std API gives advice
fn mark(start: *const u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    let at = start as usize;
    let (Some(first), Some(end)) = (at.checked_next_multiple_of(HUGE), at.checked_add(bytes))
    else {
        return;
    };
    let last = end - end % HUGE;
    if last <= first {
        return;
    }
    // SAFETY: `[first, last)` lies inside one live allocation of the caller's, page-aligned;
    // MADV_HUGEPAGE is advice that changes no byte of it. A refusal (an old kernel, THP off)
    // is harmless and ignored.
    unsafe {
        libc::madvise(
            first as *mut libc::c_void,
            last - first,
            libc::MADV_HUGEPAGE,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn mark(_: *const u8, _: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_list_keeps_what_it_holds_and_fills_as_any() {
        let mut list: Vec<u64> = (0..1000).collect();
        list.reserve(3 << 20);
        advise(&list);
        list.extend(1000..(3 << 20));
        assert_eq!(list.len(), 3 << 20);
        assert!(list.iter().enumerate().all(|(i, &v)| v == i as u64));
        // A small list and an empty one are left as they are.
        advise(&Vec::<u8>::with_capacity(10));
        advise(&Vec::<u8>::new());
    }

    /// On Linux with THP offered, a marked list's 2 MiB-aligned inside carries the kernel's
    /// record of the advice (`hg` in the mapping's `VmFlags`). Whether a huge page then backs it
    /// is the kernel's call (free, unfragmented memory; a CI machine once had none), so the
    /// test checks the advice, which is all this module gives, not the kernel's answer. (No
    /// unmarked list is checked beside it: the allocator may hand it memory a test running
    /// beside this one marked and freed.)
    #[cfg(target_os = "linux")]
    #[test]
    fn a_marked_list_carries_the_huge_page_advice_where_the_kernel_offers_them() {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        let offered = mode.contains("[madvise]") || mode.contains("[always]");
        let mut list: Vec<u8> = Vec::with_capacity(16 << 20);
        // (`mark`, as `advise` does where 2 MiB pages are worth it: not on a VM that
        // reports free pages, as CI's may be.)
        mark(list.as_ptr(), list.capacity());
        list.resize(16 << 20, 1);
        let inside = (list.as_ptr() as usize).next_multiple_of(2 << 20);
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let flags = vm_flags_at(&smaps, inside).expect("the list's mapping in smaps");
        if offered {
            assert!(
                flags.contains(&"hg"),
                "marked list's flags {flags:?} ({mode})"
            );
        }
    }

    /// A balloon that reports free pages is found among a VM's virtio devices; one that does
    /// not, another device with the same feature bit, unreadable files and no folder are not.
    #[test]
    fn a_vm_that_reports_free_pages_is_told_by_its_balloon() {
        let dir = tempfile::tempdir().unwrap();
        let device = |name: &str, id: &str, features: &str| {
            let d = dir.path().join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("device"), id).unwrap();
            std::fs::write(d.join("features"), features).unwrap();
        };
        // A block device with bit 5 set (another meaning there), a balloon without it.
        device("virtio1", "0x0002\n", "0010011001000000\n");
        device("virtio0", "0x0005\n", "0110000100000000\n");
        assert!(!reports_free_pages(dir.path()));
        // The same balloon with free page reporting (bits 1, 2, 5 and 7 here).
        std::fs::write(dir.path().join("virtio0/features"), "0110010100000000\n").unwrap();
        assert!(reports_free_pages(dir.path()));
        // A balloon whose files say nothing readable; no folder at all.
        let empty = tempfile::tempdir().unwrap();
        std::fs::create_dir(empty.path().join("virtio0")).unwrap();
        assert!(!reports_free_pages(empty.path()));
        assert!(!reports_free_pages(&empty.path().join("none")));
    }

    /// The `VmFlags` of the mapping holding address `at`, in `/proc/self/smaps` text (a marked
    /// stretch is a mapping of its own).
    fn vm_flags_at(smaps: &str, at: usize) -> Option<Vec<&str>> {
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((span, _)) = line.split_once(' ')
                && let Some((lo, hi)) = span.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = lo <= at && at < hi;
                continue;
            }
            if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return Some(flags.split_whitespace().collect());
            }
        }
        None
    }
}
