/*
 * The few glibc-only symbols that Debian's libstdc++.so.6 and libgcc_s.so.1
 * (built against glibc) ask of their C library, written for musl, so that
 * those two libraries can stand in for a musl-built C++ runtime when the
 * musl release executables are run on a Debian machine. Built as a shared
 * object named after glibc's loader (ld-linux-*.so.*), which libstdc++.so.6
 * lists as NEEDED: musl's loader then maps it, and since musl binds every
 * symbol in one global scope, it supplies them all. The same idea as
 * Alpine's gcompat, cut down to what these two libraries need.
 *
 * No headers: the file is compiled for x86-64 and for aarch64, and the
 * aarch64 build has a glibc cross compiler but no musl headers, so the few
 * types used are declared here as musl and the ELF gABI define them for
 * LP64 targets.
 */

typedef unsigned long size_t;
typedef long ssize_t;
typedef unsigned int uint32_t;
typedef unsigned long elf_addr;
struct tm;
typedef struct __locale_struct *locale_t;
typedef unsigned pthread_key_t;
typedef int pthread_once_t;

extern ssize_t getrandom(void *buf, size_t len, unsigned flags);
extern size_t strftime_l(char *s, size_t n, const char *f, const struct tm *t, locale_t l);
extern void *malloc(size_t n);
extern void free(void *p);
extern void abort(void);
extern int *__errno_location(void);
extern unsigned long getauxval(unsigned long type);
extern int pthread_once(pthread_once_t *once, void (*fn)(void));
extern int pthread_key_create(pthread_key_t *key, void (*dtor)(void *));
extern void *pthread_getspecific(pthread_key_t key);
extern int pthread_setspecific(pthread_key_t key, const void *value);

#define EXPORT __attribute__((visibility("default")))
#define EINTR 4

/* glibc 2.36's arc4random: 32 bits from the kernel's generator, never failing. */
EXPORT uint32_t arc4random(void) {
  uint32_t v;
  unsigned char *p = (unsigned char *)&v;
  size_t got = 0;
  while (got < sizeof v) {
    ssize_t n = getrandom(p + got, sizeof v - got, 0);
    if (n > 0) got += (size_t)n;
    else if (n < 0 && *__errno_location() != EINTR) abort();
  }
  return v;
}

/* glibc's internal name for strftime_l, which musl has under its public name. */
EXPORT size_t __strftime_l(char *s, size_t n, const char *f, const struct tm *t, locale_t l) {
  return strftime_l(s, n, f, t, l);
}

/* glibc's internal name for getauxval, which aarch64's libstdc++ asks for. */
EXPORT unsigned long __getauxval(unsigned long type) { return getauxval(type); }

/*
 * libstdc++ reads this before choosing plain or atomic reference counting.
 * Zero says "more than one thread may be running": always the atomic path,
 * which is correct in every case, only not the fastest for a lone thread.
 */
EXPORT char __libc_single_threaded = 0;

/*
 * Destructors of thread_local objects, run when their thread ends (a
 * pthread key's destructor). Those registered by a destructor while the
 * list runs land in a fresh list, which musl runs on its next pass over
 * the keys. The main thread's list is not run at exit, as glibc would.
 */
struct tls_dtor {
  void (*fn)(void *);
  void *obj;
  struct tls_dtor *next;
};

static pthread_key_t tls_key;
static pthread_once_t tls_once;

static void tls_run(void *head) {
  for (struct tls_dtor *d = head, *next; d; d = next) {
    next = d->next;
    d->fn(d->obj);
    free(d);
  }
}

static void tls_init(void) {
  if (pthread_key_create(&tls_key, tls_run) != 0) abort();
}

EXPORT int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso) {
  (void)dso;
  pthread_once(&tls_once, tls_init);
  struct tls_dtor *d = malloc(sizeof *d);
  if (!d) return -1;
  d->fn = fn;
  d->obj = obj;
  d->next = pthread_getspecific(tls_key);
  if (pthread_setspecific(tls_key, d) != 0) {
    free(d);
    return -1;
  }
  return 0;
}

/*
 * glibc 2.35's _dl_find_object: which loaded object holds `pc`, and where
 * its PT_GNU_EH_FRAME is. libgcc_s's unwinder asks this first and, built
 * against a glibc that has it, never walks dl_iterate_phdr itself, so it
 * must answer truly or C++ exceptions cannot be caught. Found here with
 * musl's dl_iterate_phdr. The layout is glibc's for x86-64 and aarch64
 * (neither has dlfo_eh_dbase nor dlfo_eh_count).
 */
struct dl_find_object {
  unsigned long long dlfo_flags;
  void *dlfo_map_start;
  void *dlfo_map_end;
  void *dlfo_link_map;
  void *dlfo_eh_frame;
  unsigned long long dlfo_reserved[7];
};

struct elf_phdr {
  uint32_t p_type;
  uint32_t p_flags;
  unsigned long p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align;
};

struct dl_phdr_info {
  elf_addr dlpi_addr;
  const char *dlpi_name;
  const struct elf_phdr *dlpi_phdr;
  unsigned short dlpi_phnum;
};

extern int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);

#define PT_LOAD 1
#define PT_GNU_EH_FRAME 0x6474e550

struct find_query {
  elf_addr pc;
  struct dl_find_object *out;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct find_query *q = data;
  elf_addr lo = ~0UL, hi = 0;
  int holds = 0;
  void *eh = 0;
  for (unsigned i = 0; i < info->dlpi_phnum; i++) {
    const struct elf_phdr *ph = &info->dlpi_phdr[i];
    elf_addr start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD) {
      if (start < lo) lo = start;
      if (start + ph->p_memsz > hi) hi = start + ph->p_memsz;
      if (q->pc >= start && q->pc < start + ph->p_memsz) holds = 1;
    } else if (ph->p_type == PT_GNU_EH_FRAME) {
      eh = (void *)start;
    }
  }
  if (!holds) return 0;
  q->out->dlfo_flags = 0;
  q->out->dlfo_map_start = (void *)lo;
  q->out->dlfo_map_end = (void *)hi;
  q->out->dlfo_link_map = 0;
  q->out->dlfo_eh_frame = eh;
  return 1;
}

EXPORT int _dl_find_object(void *pc, struct dl_find_object *out) {
  struct find_query q = {(elf_addr)pc, out};
  return dl_iterate_phdr(find_cb, &q) ? 0 : -1;
}

/*
 * libgcc_s keeps its x86 CPU model under a symbol version that musl's
 * loader does not bind, and refers to it through the dynamic table, so it
 * must come from here. Zeroes mean a CPU of no known vendor or model with
 * no feature bits: __builtin_cpu_supports answers no and callers take
 * their generic path. Debian's aarch64 libgcc_s has no such symbols.
 */
#if defined(__x86_64__)
EXPORT struct {
  unsigned vendor, type, subtype, features[1];
} __cpu_model;

EXPORT int __cpu_indicator_init(void) { return 0; }
#endif
