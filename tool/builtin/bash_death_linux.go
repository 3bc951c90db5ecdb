package builtin

import "syscall"

// dieWithWorker has the shell killed when the worker that started it dies
// (kill -9, a crash): the agent is then told "outcome unknown", and the
// command must not go on writing after that. The signal holds through the
// shell's exec of its last command; what the shell forked (a background
// job, the other members of a pipeline) runs on. Linux sends it when the
// thread that started the shell ends, so the caller keeps that thread
// locked until the shell is gone.
func dieWithWorker(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
