"""The server's runs: the run folders a host knows and the one run it trains (`run_manager`,
`live_run`), runs another process trains, followed from their files (`followed_runs`), what a
run folder says of itself (`stored_run`), and one writer per tip store (`memory_access`)."""
