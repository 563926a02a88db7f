//! BOINC XML formats: client_state.xml, global_prefs.xml, cc_config.xml.
