// Runs a process as on a CPU without SHA-NI: the same machine, with the
// SHA extensions' CPUID bit (leaf 7, subleaf 0, EBX bit 29) cleared for
// every reader in the process, so ring, OpenSSL and V8 take the paths
// they take on such a CPU (for SHA-256: ring's and OpenSSL's AVX2 code).
//
// How: Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID, x86-64, the
// `cpuid_fault` flag in /proc/cpuinfo) makes every CPUID instruction of
// the process and of the threads it starts raise SIGSEGV; the handler
// runs the instruction with faulting off, clears the bit and steps over
// it. Node resets signal handlers at start and installs its own SIGSEGV
// handler (WebAssembly's bounds traps), so `sigaction` for SIGSEGV is
// interposed: the process's handler is kept behind this one and called
// for every other fault. The setting does not survive execve; child
// processes get it from LD_PRELOAD, which they inherit.
//
//   gcc -O2 -shared -fPIC -o /tmp/hide-sha-ni.so bench/probes/hide-sha-ni.c -ldl
//   LD_PRELOAD=/tmp/hide-sha-ni.so npm run bench -- --only 'tiny: tidepool postRecords|tiny: Rust'
//
// Only for measuring: a process under it pays two system calls per CPUID.
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn real_sigaction;
// The process's own SIGSEGV action, called for faults that are not CPUID.
static struct sigaction app_action;

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (!real_sigaction) real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
  if (sig != SIGSEGV) return real_sigaction(sig, act, old);
  if (old) *old = app_action;
  if (act) app_action = *act;
  return 0;
}

static void on_segv(int sig, siginfo_t *info, void *context) {
  ucontext_t *uc = context;
  greg_t *r = uc->uc_mcontext.gregs;
  const unsigned char *ip = (const unsigned char *)r[REG_RIP];
  if (ip[0] != 0x0f || ip[1] != 0xa2) {
    if (app_action.sa_flags & SA_SIGINFO) {
      app_action.sa_sigaction(sig, info, context);
    } else if (app_action.sa_handler != SIG_DFL && app_action.sa_handler != SIG_IGN) {
      app_action.sa_handler(sig);
    } else {
      // No handler of the process's: the fault is retried and kills it.
      struct sigaction dfl;
      memset(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      real_sigaction(SIGSEGV, &dfl, 0);
    }
    return;
  }
  unsigned leaf = (unsigned)r[REG_RAX], subleaf = (unsigned)r[REG_RCX], a, b, c, d;
  syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
  __cpuid_count(leaf, subleaf, a, b, c, d);
  syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
  if (leaf == 7 && subleaf == 0) b &= ~(1u << 29);
  r[REG_RAX] = a;
  r[REG_RBX] = b;
  r[REG_RCX] = c;
  r[REG_RDX] = d;
  r[REG_RIP] += 2;
}

__attribute__((constructor)) static void hide_sha_ni(void) {
  real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_segv;
  action.sa_flags = SA_SIGINFO | SA_NODEFER;
  real_sigaction(SIGSEGV, &action, 0);
  if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
    static const char message[] = "hide-sha-ni: this CPU or kernel has no CPUID faulting\n";
    (void)!write(2, message, sizeof message - 1);
    _exit(70);
  }
}
