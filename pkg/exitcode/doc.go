// Package exitcode owns kubectl-rv's exit codes, the same for every command
// (docs/exit-codes.md):
//
//	0    ran and found nothing to report
//	1    a finding the command checks for (lag, a predicted conflict, a fight, ...)
//	2    bad usage or bad input (flags, files, unknown resources)
//	3    the cluster could not be reached or refused the request
//	130  interrupted (Ctrl-C)
//
// Commands return errors; only main turns an error into a process exit code,
// through Classify, the one classifier: no command keeps its own. Code marks
// an error with Usage, Usagef, Cluster, Findingf or SilentFinding when it
// knows better than the error's type; an error that carries no mark is
// classified by what it is (an API status, a network error, a cobra usage
// error). The rule is: bad usage, bad input or a local path the user named
// -> 2; the cluster unreachable or refusing -> 3, never for anything local;
// an error Classify does not recognise -> 2 (see Classify for why).
//
// Package exitcode does not print anything.
package exitcode
