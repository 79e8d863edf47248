//! The system calls the rewrite cache needs that std does not offer: a
//! directory held open by descriptor and every name opened, created, renamed
//! or removed relative to it without following a symbolic link (`openat`,
//! `mkdirat`, `renameat`, `unlinkat` with `O_NOFOLLOW`), `flock`, the effective
//! user id, and `AT_SECURE`. Everything else (reads, writes, `fstat`, times)
//! goes through std on the [`File`]s returned here.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A directory held open (`O_DIRECTORY | O_NOFOLLOW`): every name below is
/// resolved relative to it, so renaming or replacing the path afterwards
/// cannot redirect the cache.
#[derive(Debug)]
pub struct Dir {
    file: File,
}

fn c_name(name: &str) -> io::Result<CString> {
    if name.is_empty() || name.contains('/') {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// A descriptor `openat` returned, as a `File`.
fn adopt(fd: libc::c_int) -> io::Result<File> {
    let fd = check(fd)?;
    // SAFETY: `fd` is a descriptor the kernel just returned to us and nothing
    // else owns; the File closes it once.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

const DIR_FLAGS: libc::c_int =
    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;

impl Dir {
    /// Opens the directory at the absolute `path`; a symbolic link as its last
    /// component is refused (`ELOOP`).
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a NUL-terminated path; the flags create nothing.
        let file = adopt(unsafe { libc::open(c.as_ptr(), DIR_FLAGS) })?;
        Ok(Dir { file })
    }

    /// The subdirectory `name`, created with `mode` if missing; a symbolic link
    /// there is refused.
    pub fn subdir(&self, name: &str, mode: u32) -> io::Result<Dir> {
        let c = c_name(name)?;
        // SAFETY: a live directory descriptor and a NUL-terminated name.
        let rc = unsafe { libc::mkdirat(self.file.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::AlreadyExists {
                return Err(e);
            }
        }
        // SAFETY: as above; O_NOFOLLOW refuses a symbolic link.
        let file = adopt(unsafe { libc::openat(self.file.as_raw_fd(), c.as_ptr(), DIR_FLAGS) })?;
        Ok(Dir { file })
    }

    /// The directory itself (for `fstat`, and listing through `/proc/self/fd`).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Opens the regular file `name` for reading; a symbolic link is refused.
    pub fn open_read(&self, name: &str) -> io::Result<File> {
        self.open_with(name, libc::O_RDONLY, 0)
    }

    /// Opens (creating it if missing, mode `0600`) the file `name` for
    /// writing without truncating it (lock files).
    pub fn open_or_create(&self, name: &str) -> io::Result<File> {
        self.open_with(name, libc::O_RDWR | libc::O_CREAT, 0o600)
    }

    /// Creates the new file `name` (mode `0600`) for writing; fails if it
    /// exists (`O_EXCL`, which also refuses a symbolic link).
    pub fn create_new(&self, name: &str) -> io::Result<File> {
        self.open_with(name, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, 0o600)
    }

    fn open_with(&self, name: &str, flags: libc::c_int, mode: u32) -> io::Result<File> {
        let c = c_name(name)?;
        let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
        // SAFETY: a live directory descriptor, a NUL-terminated name; the mode
        // is passed as the variadic argument openat reads with O_CREAT.
        let file = adopt(unsafe {
            libc::openat(
                self.file.as_raw_fd(),
                c.as_ptr(),
                flags,
                mode as libc::c_uint,
            )
        })?;
        Ok(file)
    }

    /// Renames `from` to `to` in this directory (atomically replacing `to`; a
    /// symbolic link at `to` is replaced, never followed).
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (from, to) = (c_name(from)?, c_name(to)?);
        let fd = self.file.as_raw_fd();
        // SAFETY: a live directory descriptor and two NUL-terminated names.
        check(unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) }).map(drop)
    }

    /// Removes the file (or symbolic link) `name`.
    pub fn unlink(&self, name: &str) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: a live directory descriptor and a NUL-terminated name.
        check(unsafe { libc::unlinkat(self.file.as_raw_fd(), c.as_ptr(), 0) }).map(drop)
    }

    /// Removes the empty directory `name`.
    pub fn remove_dir(&self, name: &str) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: a live directory descriptor and a NUL-terminated name.
        check(unsafe { libc::unlinkat(self.file.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) })
            .map(drop)
    }

    /// The names in this directory (not `.` and `..`), read through the
    /// descriptor.
    pub fn names(&self) -> io::Result<Vec<String>> {
        let path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
        let mut names = Vec::new();
        for entry in std::fs::read_dir(path)? {
            if let Ok(name) = entry?.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }

    /// `lstat` of `name`: its metadata, not following a symbolic link.
    pub fn lstat(&self, name: &str) -> io::Result<std::fs::Metadata> {
        let path = format!("/proc/self/fd/{}/{name}", self.file.as_raw_fd());
        c_name(name)?;
        std::fs::symlink_metadata(path)
    }
}

/// Tries to take an exclusive `flock` on `file` without waiting: `Ok(false)`
/// when another open file holds it. Released when the file is closed.
pub fn try_lock(file: &File) -> io::Result<bool> {
    // SAFETY: a live descriptor; flock has no memory effects.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Releases a `flock` taken on `file`.
pub fn unlock(file: &File) {
    // SAFETY: a live descriptor; flock has no memory effects.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
}

/// Takes (and at once releases) a shared `flock` on `file`, without waiting:
/// whether the file system supports `flock` there.
pub fn probe_lock(file: &File) -> io::Result<()> {
    // SAFETY: a live descriptor; flock has no memory effects.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    if rc == 0 {
        unlock(file);
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(()) // held by another process: locking works
    } else {
        Err(e)
    }
}

/// The `f_type` magic of the file system holding `file` (`fstatfs`).
pub fn fs_magic(file: &File) -> io::Result<i64> {
    // SAFETY: an all-zero statfs is a valid value to be overwritten.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a live descriptor and a valid out-pointer.
    check(unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) })?;
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between targets
    Ok(st.f_type as i64)
}

/// The effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid cannot fail and has no memory effects.
    unsafe { libc::geteuid() }
}

/// True when the kernel marked this process `AT_SECURE` (setuid, setgid, file
/// capabilities): the dynamic loader's secure mode.
pub fn at_secure() -> bool {
    // SAFETY: getauxval reads the auxiliary vector; 0 for a missing entry.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}
