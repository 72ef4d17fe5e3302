/*
 * pyxis_shim.c — a SPANK plugin standing in for NVIDIA pyxis on sweepgate's test cluster.
 *
 * Debian's Slurm has no pyxis/enroot, so srun rejects --container-image & co. This plugin
 * registers the same options so job scripts written for pyxis clusters run unchanged. Nothing
 * is containerised: each task runs on the host. For every task of a step that sets
 * --container-image it
 *   - appends one line describing the container request to the log (plugstack arg log=PATH),
 *   - exports PYXIS_SHIM_IMAGE (and PYXIS_SHIM_MOUNTS) into the task environment,
 *   - chdir()s to --container-workdir when that directory exists on the host,
 * so tests can assert what would have been containerised.
 * Build: gcc -O2 -Wall -shared -fPIC -o pyxis_shim.so pyxis_shim.c   (needs libslurm-dev)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <slurm/spank.h>

SPANK_PLUGIN(pyxis_shim, 1);

enum { F_NO_ENTRYPOINT = 1, F_NO_MOUNT_HOME, F_REMAP_ROOT, F_WRITABLE, F_NOOP };

static char *image, *mounts, *workdir, *name, *env;
static int no_entrypoint, no_mount_home, remap_root, writable;
static char log_path[4096] = "/run/sweepgate-slurm/pyxis-shim.log";

static int keep(char **dst, const char *value)
{
	free(*dst);
	*dst = value ? strdup(value) : NULL;
	return 0;
}

static int on_image(int v, const char *a, int r) { (void)v; (void)r; return keep(&image, a); }
static int on_mounts(int v, const char *a, int r) { (void)v; (void)r; return keep(&mounts, a); }
static int on_workdir(int v, const char *a, int r) { (void)v; (void)r; return keep(&workdir, a); }
static int on_name(int v, const char *a, int r) { (void)v; (void)r; return keep(&name, a); }
static int on_env(int v, const char *a, int r) { (void)v; (void)r; return keep(&env, a); }

static int on_flag(int which, const char *a, int r)
{
	(void)a; (void)r;
	switch (which) {
	case F_NO_ENTRYPOINT: no_entrypoint = 1; break;
	case F_NO_MOUNT_HOME: no_mount_home = 1; break;
	case F_REMAP_ROOT: remap_root = 1; break;
	case F_WRITABLE: writable = 1; break;
	default: break; /* accepted, no effect: the default behaviour of pyxis */
	}
	return 0;
}

struct spank_option spank_options[] = {
	{ "container-image", "IMAGE", "pyxis shim: recorded, not pulled", 1, 0, on_image },
	{ "container-mounts", "SRC:DST[,...]", "pyxis shim: recorded, not mounted", 1, 0, on_mounts },
	{ "container-workdir", "PATH", "pyxis shim: chdir when it exists on the host", 1, 0, on_workdir },
	{ "container-name", "NAME", "pyxis shim: recorded", 1, 0, on_name },
	{ "container-env", "NAME[,...]", "pyxis shim: recorded", 1, 0, on_env },
	{ "no-container-entrypoint", NULL, "pyxis shim: recorded", 0, F_NO_ENTRYPOINT, on_flag },
	{ "no-container-mount-home", NULL, "pyxis shim: recorded", 0, F_NO_MOUNT_HOME, on_flag },
	{ "container-remap-root", NULL, "pyxis shim: recorded", 0, F_REMAP_ROOT, on_flag },
	{ "container-writable", NULL, "pyxis shim: recorded", 0, F_WRITABLE, on_flag },
	{ "container-entrypoint", NULL, "pyxis shim: no effect", 0, F_NOOP, on_flag },
	{ "container-mount-home", NULL, "pyxis shim: no effect", 0, F_NOOP, on_flag },
	{ "no-container-remap-root", NULL, "pyxis shim: no effect", 0, F_NOOP, on_flag },
	{ "container-readonly", NULL, "pyxis shim: no effect", 0, F_NOOP, on_flag },
	SPANK_OPTIONS_TABLE_END
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	for (int i = 0; i < ac; i++)
		if (strncmp(av[i], "log=", 4) == 0)
			snprintf(log_path, sizeof(log_path), "%s", av[i] + 4);
	return 0;
}

/* Remote context, as the job user, just before each task is exec'd. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	uint32_t job = 0, step = 0, task = 0;
	char node[256] = "", line[8192];
	(void)ac; (void)av;
	if (!image)
		return 0;
	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	spank_get_item(sp, S_TASK_GLOBAL_ID, &task);
	spank_getenv(sp, "SLURMD_NODENAME", node, sizeof(node));
	spank_setenv(sp, "PYXIS_SHIM_IMAGE", image, 1);
	if (mounts)
		spank_setenv(sp, "PYXIS_SHIM_MOUNTS", mounts, 1);
	if (workdir && access(workdir, X_OK) == 0 && chdir(workdir) != 0)
		slurm_error("pyxis_shim: chdir(%s) failed", workdir);
	int n = snprintf(line, sizeof(line),
			 "%ld job=%u step=%u task=%u node=%s image=%s mounts=%s workdir=%s name=%s env=%s "
			 "no_entrypoint=%d no_mount_home=%d remap_root=%d writable=%d\n",
			 (long)time(NULL), job, step, task, node, image, mounts ? mounts : "",
			 workdir ? workdir : "", name ? name : "", env ? env : "", no_entrypoint,
			 no_mount_home, remap_root, writable);
	if (n <= 0)
		return 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	/* one write() with O_APPEND: lines from concurrent tasks never interleave */
	int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, line, (size_t)n) != n)
			slurm_error("pyxis_shim: short write to %s", log_path);
		close(fd);
	}
	return 0;
}
