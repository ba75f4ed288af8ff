// Package sandbox is an MCS driver that runs the model's shell commands in an
// isolated sandbox, and reads and writes the files of its workspace.
//
// Every command runs in a sandbox of its own, by default with bubblewrap
// (bwrap, the "bwrap" backend): Linux namespaces of its own (user, mount, PID,
// network, IPC, UTS, cgroup); no network, only a loopback interface of its own,
// so that even a server on the host's 127.0.0.1 is out of reach; every
// capability dropped, no new privileges (setuid programs do not raise them),
// the user sandbox (1000); the system (/usr and the few files of /etc the
// dynamic linker needs) read-only, account files of its own, a new /proc, a
// minimal /dev, a private /tmp of [TmpSize] bytes, and one writable directory,
// the workspace, at /workspace; nothing else of the host, no home directory,
// no host process, no inherited descriptor (before each command, the
// descriptors this program inherited from its parent are marked
// close-on-exec, so that none passes through bwrap). Resource limits hold for every
// process: address space ([Config.Memory]), CPU time ([Config.CPU]), the
// number of processes ([Config.MaxProcesses]), file size ([MaxFileSize], or
// [Config.MaxDiskBytes] when that is less) and open files ([MaxOpenFiles]).
// A watchdog bounds what a command adds to the workspace's file system
// ([Config.MaxDiskBytes]) and keeps a floor of free space on it: a command that
// crosses either is killed with all its processes, and its result has
// disk_limit_exceeded and a notice; write_file refuses content that would
// cross them. The environment is exactly [Config.Env] with
// PATH, HOME and LANG.
//
// A wall-clock timeout ([Config.Timeout]; the model may ask for another, which
// is clamped to [Config.MaxTimeout]) kills the command with every process it
// started: the whole PID namespace ends, and run_command returns only when it
// has. A done context does the same. Standard output and standard error are
// kept apart, each cut to [Config.MaxOutputBytes] with its first and last half
// kept and a notice of what was cut.
//
// When the program runs as root, the user namespace alone would leave the
// command root on the host (owning what it creates, exempt from the process
// limit), so bwrap runs as the host user who owns the workspace, which must
// then not be root: give the workspace to an unprivileged user (for example
// chown 65534:65534) and make its parent directories reachable. Files and
// directories the file tools create are given to that user too.
//
// The tools are run_command {command, timeout_seconds?, stdin?} →
// {exit_code, stdout, stderr, timed_out, truncated, notice?,
// disk_limit_exceeded?}; write_file {path,
// content, encoding?}; read_file {path, max_bytes?}; list_files {path?}. The
// file tools work on the host side, through package confine: a path that leads
// out of the workspace, by "..", an absolute path or a symbolic link a command
// planted, is refused with a *confine.Error, exactly as in the filesystem
// driver.
//
// The "docker" backend runs each command in a new container of a Docker
// Engine, reached as the docker command reaches it (DOCKER_HOST and the
// other DOCKER_ variables; the local socket by default), from
// [Config.Image], which must already be on the engine (the sandbox never
// pulls): network mode none, every capability dropped, no new privileges,
// the image read-only, a private /tmp, the workspace bound at /workspace,
// the user who owns the workspace (not root), a memory limit of
// [Config.Memory], a PID limit of [Config.MaxProcesses] and the rlimits
// above. A timeout kills the container, which is removed after every
// command.
//
// The "runsc" backend runs each command under gVisor, whose own kernel stands
// between the command and the host's: an OCI bundle per command with the
// file system, user, rlimits and namespaces of the bwrap backend, run by
// "runsc --network=none run"; a timeout kills and deletes the sandbox. It
// needs root and a runsc on PATH; its test runs only where runsc is
// installed, while the configuration it writes is tested everywhere.
package sandbox
