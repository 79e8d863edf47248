// A file system where flock fails (NFS without a lock manager, some FUSE
// mounts), injected with LD_PRELOAD: every flock() call fails with ENOLCK.
// Used by check_cache.py's `nolock` check.
#include <errno.h>
#include <sys/file.h>

int flock(int fd, int operation) {
  (void)fd;
  (void)operation;
  errno = ENOLCK;
  return -1;
}
