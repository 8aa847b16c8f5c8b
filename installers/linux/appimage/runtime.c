/* Venus's AppImage type-2 runtime: the ELF at the front of Venus-<version>-x86_64.AppImage.
 *
 * An AppImage is this program with a squashfs image of the AppDir appended. Run, the program finds the image right
 * after its own ELF (section headers are the last thing the linker writes), mounts it read-only with FUSE and runs
 * AppRun from it; where FUSE cannot be used it extracts the image to a private temporary folder instead. It stands
 * in for AppImage's own runtime, which only GitHub serves: written here, built from Debian's libsquashfuse and
 * libfuse3 and linked statically, so the AppImage needs nothing from the user's system but the kernel.
 * `--appimage-help` lists the options; docs/INSTALLERS.md says how it is built and tested.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 32          /* the same as squashfuse's config.h, which is included first */
#include <squashfuse/squashfuse.h>  /* first: its config.h sets feature macros that _GNU_SOURCE then widens */
#include <fuse.h>
#include <fuse_lowlevel.h>     /* fuse_session_*: our own loop, to watch the keepalive pipe too */

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The spec's optional ELF sections, present and empty, so AppImage tools that read them find them. */
__attribute__((section(".upd_info"), used)) static const char update_info[1024];
__attribute__((section(".sha256_sig"), used)) static const char sha256_sig[1024];

static char self[PATH_MAX];  /* absolute path of this AppImage: $APPIMAGE, and the file the image is read from */
static sqfs image;           /* the appended squashfs, opened by open_image() */

static void say(const char *fmt, ...) {  /* one line on stderr, prefixed with the AppImage's file name */
  va_list ap;
  va_start(ap, fmt);
  const char *slash = strrchr(self, '/');
  fprintf(stderr, "%s: ", slash ? slash + 1 : "appimage");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* The squashfs starts where the ELF ends: after the section header table, the last part the linker writes. */
static off_t elf_end(void) {
  Elf64_Ehdr eh;
  int fd = open(self, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : pread(fd, &eh, sizeof eh, 0);
  if (fd >= 0) close(fd);
  if (n != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    say("cannot read its own ELF header (%s)", n < 0 ? strerror(errno) : "not a 64-bit ELF");
    return -1;
  }
  return (off_t)(eh.e_shoff + (Elf64_Off)eh.e_shnum * eh.e_shentsize);
}

static int open_image(off_t offset) {
  int fd = open(self, O_RDONLY | O_CLOEXEC);  /* CLOEXEC: AppRun never inherits it */
  if (fd < 0) {
    say("cannot open %s: %s", self, strerror(errno));
    return -1;
  }
  sqfs_err err = sqfs_init(&image, fd, (size_t)offset);
  if (err == SQFS_OK) return 0;
  const char *why = err == SQFS_BADFORMAT  ? "no squashfs image there (was one appended to the runtime?)"
                    : err == SQFS_BADCOMP ? "the image's compression is not built into this runtime"
                    : err == SQFS_BADVERSION ? "unsupported squashfs version"
                                            : "the image cannot be read";
  say("no AppImage payload at offset %lld: %s", (long long)offset, why);
  close(fd);
  return -1;
}

/* ---------- FUSE: the image, read-only, through libsquashfuse (paths are looked up from the root each time) ---------- */

static int lookup(const char *path, sqfs_inode *inode) {
  bool found = false;
  if (sqfs_inode_get(&image, inode, sqfs_inode_root(&image)) || sqfs_lookup_path(&image, inode, path, &found))
    return -EIO;
  return found ? 0 : -ENOENT;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
  (void)fi;
  sqfs_inode inode;
  int rc = lookup(path, &inode);
  if (rc) return rc;
  memset(st, 0, sizeof *st);
  st->st_mode = inode.base.mode;  /* libsquashfuse adds the file-type bits */
  st->st_ino = inode.base.inode_number;
  st->st_nlink = inode.nlink;
  st->st_uid = getuid();          /* the mount is private to the user who ran the AppImage */
  st->st_gid = getgid();
  st->st_mtime = st->st_ctime = st->st_atime = inode.base.mtime;
  if (S_ISREG(st->st_mode)) st->st_size = (off_t)inode.xtra.reg.file_size;
  else if (S_ISLNK(st->st_mode)) st->st_size = (off_t)inode.xtra.symlink_size;
  st->st_blocks = (st->st_size + 511) / 512;
  return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags) {
  (void)off, (void)fi, (void)flags;
  sqfs_inode inode;
  sqfs_dir dir;
  sqfs_dir_entry entry;
  sqfs_name name;
  sqfs_err err = SQFS_OK;
  int rc = lookup(path, &inode);
  if (rc) return rc;
  if (!S_ISDIR(inode.base.mode)) return -ENOTDIR;
  if (sqfs_dir_open(&image, &inode, &dir, 0)) return -EIO;
  fill(buf, ".", NULL, 0, 0);
  fill(buf, "..", NULL, 0, 0);
  sqfs_dentry_init(&entry, name);
  while (sqfs_dir_next(&image, &dir, &entry, &err)) {  /* offset 0: libfuse keeps the whole listing */
    struct stat st = {.st_ino = sqfs_dentry_inode_num(&entry), .st_mode = sqfs_dentry_mode(&entry)};
    if (fill(buf, sqfs_dentry_name(&entry), &st, 0, 0)) break;
  }
  return err ? -EIO : 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi) {
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EROFS;
  sqfs_inode *inode = malloc(sizeof *inode);  /* kept for the reads, freed at release */
  if (!inode) return -ENOMEM;
  int rc = lookup(path, inode);
  if (!rc && !S_ISREG(inode->base.mode)) rc = -EISDIR;
  if (rc) {
    free(inode);
    return rc;
  }
  fi->fh = (uintptr_t)inode;
  fi->keep_cache = 1;  /* the image never changes: cached pages stay valid across opens */
  return 0;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
  (void)path;
  sqfs_inode *inode = (sqfs_inode *)(uintptr_t)fi->fh;
  off_t file_size = (off_t)inode->xtra.reg.file_size;
  if (off >= file_size) return 0;
  sqfs_off_t n = (off_t)size < file_size - off ? (off_t)size : file_size - off;
  return sqfs_read_range(&image, inode, off, &n, buf) ? -EIO : (int)n;
}

static int fs_release(const char *path, struct fuse_file_info *fi) {
  (void)path;
  free((void *)(uintptr_t)fi->fh);
  return 0;
}

static int fs_readlink(const char *path, char *buf, size_t size) {
  sqfs_inode inode;
  int rc = lookup(path, &inode);
  if (rc) return rc;
  if (!S_ISLNK(inode.base.mode)) return -EINVAL;
  return sqfs_readlink(&image, &inode, buf, &size) ? -EIO : 0;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
  (void)conn;
  cfg->use_ino = 1;
  cfg->kernel_cache = 1;  /* an immutable image: let the kernel cache names, attributes and data for long */
  cfg->entry_timeout = cfg->attr_timeout = cfg->negative_timeout = 3600;
  return NULL;
}

static const struct fuse_operations fs_ops = {
    .init = fs_init, .getattr = fs_getattr, .readdir = fs_readdir, .open = fs_open,
    .read = fs_read, .release = fs_release, .readlink = fs_readlink,
};

/* ---------- running AppRun ---------- */

static pid_t app_pid;
static pid_t server_pid;          /* the FUSE server while it serves AppRun's mount (mount_and_run), else 0 */
static const char *server_mnt;   /* and its mount point */
static void unmount_lazily(const char *mnt);
static volatile sig_atomic_t stopping;  /* a signal that asked us to end, before AppRun was started */
static void forward_signal(int sig) {
  if (app_pid > 0) kill(app_pid, sig);
  else stopping = sig;
}

/* Runs APPDIR/AppRun with the user's arguments and the AppImage environment; returns its exit status. */
static int run_apprun(const char *appdir, const char *argv0, int argc, char **argv) {
  char apprun[PATH_MAX], owd[PATH_MAX];
  snprintf(apprun, sizeof apprun, "%s/AppRun", appdir);
  setenv("APPDIR", appdir, 1);
  setenv("APPIMAGE", self, 1);
  setenv("ARGV0", argv0, 1);
  if (getcwd(owd, sizeof owd)) setenv("OWD", owd, 1);
  char **args = calloc((size_t)argc + 2, sizeof *args);
  if (!args) return 1;
  args[0] = apprun;
  memcpy(args + 1, argv, (size_t)argc * sizeof *args);
  app_pid = fork();
  if (app_pid == 0) {
    execv(apprun, args);
    say("cannot run %s: %s", apprun, strerror(errno));
    _exit(127);
  }
  if (app_pid < 0) {
    say("cannot start AppRun: %s", strerror(errno));
    return 1;
  }
  /* Ctrl-C and Ctrl-\ reach AppRun from the terminal; a kill aimed at this process is passed on. Either way we
     stay to clean up after it. */
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  struct sigaction sa = {.sa_handler = forward_signal, .sa_flags = SA_RESTART};
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  /* Waits for AppRun, and for the FUSE server too: should it end first, its mount would stay behind, every
     access failing with "Transport endpoint is not connected". It is detached at once, and the app's exit
     code still comes back. */
  int status = 0, waited;
  for (;;) {
    int st = 0;
    waited = waitpid(server_pid > 0 ? -1 : app_pid, &st, 0);
    if (waited < 0 && errno == EINTR) continue;
    if (waited == app_pid) status = st;
    if (waited == app_pid || waited < 0) break;
    if (waited == server_pid) {
      server_pid = 0;
      unmount_lazily(server_mnt);
      rmdir(server_mnt);
      char how[32];
      if (WIFSIGNALED(st)) snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(st));
      else snprintf(how, sizeof how, "exit code %d", WEXITSTATUS(st));
      say("the FUSE server ended before the app (%s): its files are gone, and %s is unmounted", how, server_mnt);
    }  /* any other: a child this process had before it became the runtime */
  }
  free(args);
  if (waited < 0) {  /* not ours to wait for (SIGCHLD ignored by whoever started us): no exit code to give */
    say("cannot wait for AppRun: %s", strerror(errno));
    return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A private (0700) folder in $TMPDIR or /tmp named after the AppImage: ".mount_Venus1a2B3c". */
static int private_dir(const char *kind, char *out, size_t len) {
  const char *base = strrchr(self, '/') + 1, *tmp = getenv("TMPDIR");
  int n = 0;
  while (n < 16 && ((base[n] >= 'a' && base[n] <= 'z') || (base[n] >= 'A' && base[n] <= 'Z') ||
                    (base[n] >= '0' && base[n] <= '9')))
    n++;
  /* a relative $TMPDIR would leave the mount behind once the FUSE server changes directory */
  snprintf(out, len, "%s/.%s_%.*sXXXXXX", tmp && *tmp == '/' ? tmp : "/tmp", kind, n, base);
  if (mkdtemp(out)) return 0;
  say("cannot create %s: %s", out, strerror(errno));
  return -1;
}

/* ---------- extracting ---------- */

/* Extraction never follows a symlink: each folder of an entry's path is opened from the target folder with
   O_NOFOLLOW, one name at a time, and every file, folder and link is made with the *at calls relative to its folder.
   A crafted image (a symlink `x` and then `x/file`, or a folder named "..") could otherwise write outside. */

struct dir_mode { char *path; mode_t mode; time_t mtime; };

static int bad_name(const char *name, size_t len) {
  return len == 0 || (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

/* Opens the folder that holds `rel` (a path in the image, relative to the folder `root` is open on) and points
   *leaf at its last name. Returns the folder's fd, root itself for a name at the top, or -1 with errno set. */
static int open_parent(int root, const char *rel, const char **leaf) {
  int fd = root;
  const char *name = rel, *slash;
  while ((slash = strchr(name, '/'))) {
    char part[NAME_MAX + 1];
    size_t len = (size_t)(slash - name);
    if (bad_name(name, len) || len > NAME_MAX) {
      errno = EINVAL;
      break;
    }
    memcpy(part, name, len);
    part[len] = '\0';
    int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd != root) close(fd);
    if (next < 0) return -1;  /* ELOOP or ENOTDIR: a symlink or a file where a folder should be */
    fd = next;
    name = slash + 1;
  }
  if (slash || bad_name(name, strlen(name))) {
    if (fd != root) close(fd);
    errno = EINVAL;
    return -1;
  }
  *leaf = name;
  return fd;
}

/* Opens the folder `rel` itself, never through a symlink. */
static int open_dir(int root, const char *rel) {
  const char *leaf;
  int parent = open_parent(root, rel, &leaf);
  if (parent < 0) return -1;
  int fd = openat(parent, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (parent != root) close(parent);
  return fd;
}

static int extract_file(sqfs_inode *inode, int dir, const char *name) {
  errno = 0;  /* a failed read of the image sets none: it must not report the unlink before it */
  /* O_EXCL: made here and now, never an older file or a symlink (the caller unlinked what was there) */
  int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
  if (fd < 0) return -1;
  static char buf[1 << 20];
  off_t size = (off_t)inode->xtra.reg.file_size;
  for (off_t at = 0; at < size;) {
    sqfs_off_t n = size - at < (off_t)sizeof buf ? size - at : (off_t)sizeof buf;
    if (sqfs_read_range(&image, inode, at, &n, buf) || n <= 0 || write(fd, buf, (size_t)n) != n) {
      if (!errno) errno = EIO;
      close(fd);
      return -1;
    }
    at += n;
  }
  /* the image's mode whatever the umask, and its mtime (Python compares .pyc files with their sources' mtimes) */
  struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = inode->base.mtime}};
  return fchmod(fd, inode->base.mode & 07777) | futimens(fd, times) | close(fd);
}

/* Writes one entry (rel: its path in the image) under the folder `root` is open on. Returns 0, or -1 after saying
   why in one line. */
static int extract_entry(int root, const char *dest, const char *rel, sqfs_inode *inode, struct dir_mode **dirs,
                         size_t *ndirs) {
  const char *leaf = NULL, *why = NULL;
  errno = 0;
  int dir = open_parent(root, rel, &leaf), rc = dir < 0 ? -1 : 0;
  if (dir < 0) {
    why = errno == EINVAL ? "an empty, \".\" or \"..\" name in its path"
          : errno == ELOOP || errno == ENOTDIR ? "a symlink or a file stands where its path needs a folder"
                                               : NULL;
  } else if (S_ISDIR(inode->base.mode)) {
    /* writable while we fill it; its own mode is set at the end, so a read-only folder still gets its files */
    if (mkdirat(dir, leaf, 0700) && errno != EEXIST) rc = -1;
    int fd = rc ? -1 : openat(dir, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && !rc) {
      rc = -1;
      if (errno == ELOOP || errno == ENOTDIR) why = "a symlink or a file of that name is there already";
    } else if (fd >= 0) {
      rc = fchmod(fd, 0700);  /* an older extraction's read-only folder */
      close(fd);
    }
    struct dir_mode *more = rc ? NULL : realloc(*dirs, (*ndirs + 1) * sizeof **dirs);
    if (more) {
      *dirs = more;
      more[*ndirs].path = strdup(rel);
      more[*ndirs].mode = inode->base.mode & 07777;
      more[(*ndirs)++].mtime = inode->base.mtime;
    }
  } else if (S_ISREG(inode->base.mode) || S_ISLNK(inode->base.mode)) {
    /* an older extraction's file may be read-only or a symlink; a folder of that name stays, and fails below */
    if (unlinkat(dir, leaf, 0) && errno != ENOENT) {
      rc = -1;
      if (errno == EISDIR || errno == EPERM) why = "a folder of that name is there already";
    } else if (S_ISREG(inode->base.mode)) {
      rc = extract_file(inode, dir, leaf);
    } else {
      char target[PATH_MAX];
      size_t len = sizeof target;
      rc = sqfs_readlink(&image, inode, target, &len) ? (errno = EIO, -1) : symlinkat(target, dir, leaf);
      struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = inode->base.mtime}};
      if (!rc) utimensat(dir, leaf, times, AT_SYMLINK_NOFOLLOW);
    }
  }  /* devices, fifos and sockets have no place in an AppDir: skipped */
  if (dir >= 0 && dir != root) close(dir);
  if (rc) say("cannot extract %s/%s: %s", dest, rel, why ? why : strerror(errno ? errno : EIO));
  return rc;
}

/* Writes every file, folder and symlink of the image under dest, with the image's modes. */
static int extract(const char *dest) {
  sqfs_traverse trv;
  sqfs_inode inode;
  sqfs_err err = sqfs_traverse_open(&trv, &image, sqfs_inode_root(&image));
  struct dir_mode *dirs = NULL;
  size_t ndirs = 0;
  int rc = 0, root = -1;
  if (!err && (mkdir(dest, 0755) == 0 || errno == EEXIST))
    root = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);  /* not a symlink either */
  if (root < 0) {
    say("cannot extract into %s: %s", dest, err ? "the image cannot be read" : strerror(errno));
    if (!err) sqfs_traverse_close(&trv);
    return -1;
  }
  while (rc == 0 && !stopping && sqfs_traverse_next(&trv, &err)) {
    if (trv.dir_end) continue;
    if (strlen(dest) + 1 + strlen(trv.path) >= PATH_MAX) {
      say("cannot extract %s: the path is too long", trv.path);
      rc = -1;
      break;
    }
    const char *name = sqfs_dentry_name(&trv.entry);
    if (strchr(name, '/') || bad_name(name, strlen(name))) {  /* a crafted image: it must not write outside dest */
      say("cannot extract %s/%s: the image has an entry named \"%s\"", dest, trv.path, name);
      rc = -1;
      break;
    }
    if (sqfs_inode_get(&image, &inode, trv.entry.inode)) {
      say("cannot read %s from the image", trv.path);
      rc = -1;
      break;
    }
    rc = extract_entry(root, dest, trv.path, &inode, &dirs, &ndirs);
  }
  if (err && rc == 0) {
    say("cannot read the image's folders (squashfs error %d)", err);
    rc = -1;
  }
  sqfs_traverse_close(&trv);
  while (ndirs--) {  /* in reverse, so each folder comes after the ones inside it */
    struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = dirs[ndirs].mtime}};
    int fd = rc == 0 && dirs[ndirs].path ? open_dir(root, dirs[ndirs].path) : -1;
    if (fd >= 0) fchmod(fd, dirs[ndirs].mode), futimens(fd, times), close(fd);
    free(dirs[ndirs].path);
  }
  free(dirs);
  close(root);
  return rc;
}

static int make_writable(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)ftw;
  if (type == FTW_D || type == FTW_DNR) chmod(path, (st->st_mode & 07777) | S_IRWXU);
  return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st, (void)ftw;
  if ((type == FTW_DP ? rmdir(path) : unlink(path)) && errno != ENOENT) say("cannot remove %s: %s", path, strerror(errno));
  return 0;
}

static void remove_tree(const char *dir) {
  nftw(dir, make_writable, 32, FTW_PHYS);               /* read-only folders would keep their files */
  nftw(dir, remove_one, 32, FTW_PHYS | FTW_DEPTH);
}

static int extract_and_run(const char *argv0, int argc, char **argv) {
  char dir[PATH_MAX];
  /* Ctrl-C or a kill while extracting ends the extraction, and the half-written folder is removed */
  struct sigaction sa = {.sa_handler = forward_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  if (private_dir("extract", dir, sizeof dir)) return 1;
  int rc = extract(dir) || stopping ? 1 : run_apprun(dir, argv0, argc, argv);
  remove_tree(dir);
  return stopping ? 128 + stopping : rc;
}

/* ---------- mounting ---------- */

static int have_fusermount(void) {  /* where libfuse looks for it: /usr/bin, then $PATH */
  if (access("/usr/bin/fusermount3", X_OK) == 0) return 1;
  const char *path = getenv("PATH");
  char *dirs = strdup(path ? path : ""), *save = NULL, file[PATH_MAX];
  int found = 0;
  for (char *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
    snprintf(file, sizeof file, "%s/fusermount3", d);
    found = access(file, X_OK) == 0;
  }
  free(dirs);
  return found;
}

/* Detached (lazy) unmount: it is gone from the namespace now, and really ends when the last open file closes. */
static void unmount_lazily(const char *mnt) {
  if (umount2(mnt, MNT_DETACH) == 0) return;  /* root */
  pid_t pid = fork();
  if (pid == 0) {
    execlp("fusermount3", "fusermount3", "-u", "-z", "-q", mnt, (char *)NULL);
    _exit(127);
  }
  if (pid > 0) waitpid(pid, NULL, 0);
}

/* The FUSE server (a child process): serves requests until the runtime closes `keepalive` (AppRun has exited, or
   the runtime died), then unmounts and goes on serving whatever is still open until the kernel ends the
   connection. It ignores Ctrl-C and kill signals meant for the app, so the app never loses its files mid-exit. */
static void serve(struct fuse *f, const char *mnt, int keepalive) {
  struct fuse_session *se = fuse_get_session(f);
  struct fuse_buf buf = {0};
  struct pollfd p[2] = {{.fd = fuse_session_fd(se), .events = POLLIN}, {.fd = keepalive, .events = POLLIN}};
  nfds_t watched = 2;
  while (!fuse_session_exited(se)) {
    if (poll(p, watched, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (watched == 2 && p[1].revents) {
      unmount_lazily(mnt);
      rmdir(mnt);
      watched = 1;
    }
    if (p[0].revents) {
      int n = fuse_session_receive_buf(se, &buf);
      if (n == -EINTR || n == -EAGAIN) continue;
      if (n <= 0) break;  /* 0: the kernel ended the connection (unmounted) */
      fuse_session_process_buf(se, &buf);
    }
  }
  free(buf.mem);
}

/* Mounts the image at a private folder and runs AppRun from it. Returns -1 (before AppRun ran) when FUSE cannot
   be used, after saying why in one line, so the caller can extract instead. */
static int mount_and_run(const char *argv0, int argc, char **argv) {
  if (access("/dev/fuse", R_OK | W_OK)) {
    say("cannot mount with FUSE (/dev/fuse: %s); extracting to a temporary folder instead", strerror(errno));
    return -1;
  }
  if (geteuid() != 0 && !have_fusermount()) {
    say("cannot mount with FUSE (no fusermount3: install the fuse3 package); extracting to a temporary folder instead");
    return -1;
  }
  char mnt[PATH_MAX];
  int ready[2], keepalive[2];
  if (private_dir("mount", mnt, sizeof mnt) || pipe2(ready, O_CLOEXEC) || pipe2(keepalive, O_CLOEXEC)) return 1;
  pid_t server = fork();
  if (server == 0) {
    close(ready[0]);
    close(keepalive[1]);
    signal(SIGINT, SIG_IGN), signal(SIGTERM, SIG_IGN), signal(SIGHUP, SIG_IGN), signal(SIGQUIT, SIG_IGN);
    /* libfuse and fusermount3 write their complaints to stderr: keep them, to pass on as one line */
    int log = memfd_create("fuse-log", MFD_CLOEXEC), saved = dup(2);
    if (log >= 0) dup2(log, 2);
    char *args[] = {"appimage", "-o", "ro,nodev,nosuid,fsname=appimage,subtype=squashfs", NULL};
    struct fuse_args fa = FUSE_ARGS_INIT(3, args);
    struct fuse *f = fuse_new(&fa, &fs_ops, sizeof fs_ops, NULL);
    int mounted = f && fuse_mount(f, mnt) == 0;
    char why[256] = "";
    if (log >= 0) {
      ssize_t n = pread(log, why, sizeof why - 1, 0);
      why[n > 0 ? n : 0] = '\0';
      why[strcspn(why, "\n")] = '\0';
      dup2(saved, 2);
    }
    if (!mounted) {
      const char *msg = why[0] ? why : "the mount failed";
      if (write(ready[1], msg, strlen(msg)) < 0) _exit(1);
      _exit(1);
    }
    if (write(ready[1], "", 1) != 1) _exit(1);
    /* From here on the app's output streams are not ours to hold open (a `| tee` would wait for us). */
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) dup2(null, 0), dup2(null, 1), dup2(null, 2);
    if (chdir("/")) {}
    serve(f, mnt, keepalive[0]);
    fuse_destroy(f);
    _exit(0);
  }
  close(ready[1]);
  close(keepalive[0]);
  char why[256] = "";
  ssize_t n = server < 0 ? -1 : read(ready[0], why, sizeof why - 1);
  close(ready[0]);
  if (n != 1 || why[0] != '\0') {
    why[n > 0 ? n : 0] = '\0';
    say("cannot mount with FUSE (%s); extracting to a temporary folder instead",
        n > 0 ? why : server < 0 ? strerror(errno) : "the mount process ended");
    if (server > 0) waitpid(server, NULL, 0);
    close(keepalive[1]);
    rmdir(mnt);
    return -1;
  }
  server_pid = server, server_mnt = mnt;
  int rc = run_apprun(mnt, argv0, argc, argv);
  server_pid = 0;
  close(keepalive[1]);  /* the server unmounts now (unless it ended early and was reaped) */
  /* Wait up to 1 s for it: normally it unmounts and exits at once; if a process the app left behind still holds
     files open, the server outlives us and ends when they are closed. */
  for (int i = 0; i < 50 && waitpid(server, NULL, WNOHANG) == 0; i++) usleep(20000);
  return rc;
}

static void help(void) {
  printf("Venus AppImage runtime: runs the app inside this file (a squashfs image appended to this program).\n"
         "With no --appimage-* option it mounts the image with FUSE and runs AppRun from it with the arguments\n"
         "given; without FUSE it extracts the image to a temporary folder, runs it there and removes it after.\n\n"
         "  --appimage-help              this text\n"
         "  --appimage-offset            print the offset of the image in this file\n"
         "  --appimage-extract           extract the image into ./squashfs-root\n"
         "  --appimage-extract-and-run   extract to a temporary folder, run AppRun with the other arguments,\n"
         "                               remove the folder after (also: APPIMAGE_EXTRACT_AND_RUN=1)\n\n"
         "AppRun gets APPDIR (where the image is), APPIMAGE (this file), ARGV0 and OWD (the working folder).\n");
}

int main(int argc, char **argv) {
  signal(SIGCHLD, SIG_DFL);  /* inherited as ignored, waitpid could not give AppRun's exit code */
  if (!realpath("/proc/self/exe", self)) {
    strcpy(self, "appimage");
    say("cannot find its own file through /proc/self/exe: %s", strerror(errno));
    return 1;
  }
  const char *opt = argc > 1 && !strncmp(argv[1], "--appimage-", 11) ? argv[1] : NULL;
  if (opt && !strcmp(opt, "--appimage-help")) {
    help();
    return 0;
  }
  off_t offset = elf_end();
  if (offset < 0) return 1;
  if (opt && !strcmp(opt, "--appimage-offset")) {
    printf("%lld\n", (long long)offset);
    return 0;
  }
  if (opt && strcmp(opt, "--appimage-extract") && strcmp(opt, "--appimage-extract-and-run")) {
    say("unknown option %s (--appimage-help lists them)", opt);
    return 2;
  }
  if (open_image(offset)) return 1;  /* the FUSE server inherits it */
  if (opt && !strcmp(opt, "--appimage-extract")) return extract("squashfs-root") ? 1 : 0;
  const char *env = getenv("APPIMAGE_EXTRACT_AND_RUN");
  int skip = opt ? 2 : 1;  /* the user's arguments start after ours */
  if (!opt && !(env && !strcmp(env, "1"))) {
    int rc = mount_and_run(argv[0], argc - skip, argv + skip);
    if (rc >= 0) return rc;
  }
  return extract_and_run(argv[0], argc - skip, argv + skip);
}
