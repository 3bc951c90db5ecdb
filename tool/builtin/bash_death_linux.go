package builtin

import "syscall"

// dieWithWorker has the command stopped when the worker that started it
// dies (kill -9, a crash): the agent is then told "outcome unknown", and the
// command must not go on writing after that. A contained command's init
// gets SIGTERM and kills everything the command started; a shell started
// directly gets SIGKILL, which reaches the shell and not what it forked.
// Linux sends the signal when the thread that started the process ends, so
// the caller keeps that thread locked until the process is gone.
func dieWithWorker(a *syscall.SysProcAttr, underInit bool) {
	a.Pdeathsig = syscall.SIGKILL
	if underInit {
		a.Pdeathsig = syscall.SIGTERM
	}
}
