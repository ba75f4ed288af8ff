// Package ssh holds the MCS drivers for a remote host: the ssh driver
// ([New], [NewToolDriver]) runs the model's commands there, over
// golang.org/x/crypto/ssh, and the sftp driver ([NewSFTP],
// [NewSFTPToolDriver]) gives the filesystem driver's tools over SFTP
// (github.com/pkg/sftp), confined to a directory of the host as the
// filesystem driver is to a local one.
//
// run_command takes an argument vector, never a command string: every
// argument is single-quoted for the remote shell ([Quote]), so that what the
// model passes (;, $(), backticks, newlines, globs) reaches the program as is
// and runs nothing. The remote login shell must be a POSIX shell (sh, bash,
// dash, zsh, ksh), as it is on nearly every host. For a pipeline the model
// runs ["sh", "-c", "..."], which is explicit.
//
// The host's key is pinned: [Conn.KnownHosts] is required, and a host whose
// key is missing from it, or differs, is refused with a *[HostKeyError] that
// gives the fingerprint it presented; nothing is sent to it. The credential
// is a private key (any type the ssh package reads: Ed25519, ECDSA, RSA; PEM
// or OpenSSH format; encrypted with [Conn.Passphrase]), a key file, or a
// password. No error or result shows it.
//
// A command that outlives its timeout (the model may ask for another, clamped
// to [Config.MaxTimeout]) is sent SIGKILL, which OpenSSH's server delivers to
// the command's process group, and its session is closed after a grace
// period. Standard output and standard error are kept apart, each cut to
// [Config.MaxOutputBytes] with its first and last half kept and a notice.
// The command line writes the shell's process ID on stderr before the program
// replaces the shell, so that a second session can kill the process group
// where the server does not honour the signal (OpenSSH, for a root login);
// the driver takes that line out of stderr.
//
// The sftp driver publishes the tools, descriptions, results and errors of
// drivers/filesystem, with the same read-only switch and byte cap; paths are
// confined to [SFTPConfig.Root] by the same checks, symbolic links being
// followed one by one on the host. SFTP cannot hold the directory open as
// os.Root does, so a link swapped in on the host during a call is not caught.
package ssh
