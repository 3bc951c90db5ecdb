package builtin

import "syscall"

// dieWithWorker has the shell killed when the worker that started it dies
// (kill -9, a crash): the agent is then told "outcome unknown", and the
// rest of the command must not go on writing after that. A program the
// shell already started runs on (it is not the shell's own death's
// concern), but nothing after it in the command does. Linux sends the
// signal when the thread that started the shell ends; the Go runtime ends
// a thread only under a goroutine locked to it, which nothing here does.
func dieWithWorker(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
