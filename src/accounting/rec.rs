//! Recent estimated credit with a 10-day half-life (modern BOINC, `--policy rec`).
