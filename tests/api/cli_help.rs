//! `--help` of every command, and `serve --help` grouped by topic
//! ([Configuration](docs/operations.md#configuration)).

use crate::helpers::agegate;

#[test]
fn every_command_has_help() {
    let commands: &[&[&str]] = &[
        &[],
        &["serve"],
        &["site"],
        &["site", "create"],
        &["site", "list"],
        &["site", "show"],
        &["site", "update"],
        &["site", "key"],
        &["site", "key", "create"],
        &["site", "key", "revoke"],
        &["site", "webhook-secret"],
        &["site", "webhook-secret", "rotate"],
        &["site", "deliveries"],
        &["webhook"],
        &["webhook", "redeliver"],
    ];
    for args in commands {
        let out = agegate().args(*args).arg("--help").output().unwrap();
        assert!(out.status.success(), "{args:?} --help");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Usage:"), "{args:?}: {text}");
        assert!(
            text.contains("--database-url"),
            "{args:?} documents --database-url"
        );
    }
    let out = agegate().args(["serve", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--listen",
        "--public-url",
        "--verifier-token",
        "--allow-private-webhooks",
        "--webhook-retry-schedule",
        "AGEGATE_LISTEN",
        "AGEGATE_PUBLIC_URL",
        "AGEGATE_VERIFIER_TOKEN",
        "AGEGATE_ALLOW_PRIVATE_WEBHOOKS",
        "AGEGATE_WEBHOOK_RETRY_SCHEDULE",
        "AGEGATE_DATABASE_URL",
    ] {
        assert!(text.contains(flag), "serve --help mentions {flag}");
    }
}

/// `serve --help`'s sections in order: each a heading and the flags listed under it.
fn serve_help_sections() -> Vec<(String, Vec<String>)> {
    let out = agegate().args(["serve", "--help"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_suffix(':').filter(|l| !l.starts_with(' ')) {
            sections.push((heading.to_string(), Vec::new()));
        } else if let Some(flag) = line
            .trim_start()
            .split([' ', ','])
            .find(|w| w.starts_with("--"))
        {
            if line.starts_with("  ") && !line.starts_with("          ") {
                if let Some((_, flags)) = sections.last_mut() {
                    flags.push(flag.to_string());
                }
            }
        }
    }
    sections
}

#[test]
fn serve_help_groups_every_flag_under_a_heading() {
    let sections = serve_help_sections();
    let headings: Vec<&str> = sections.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(
        headings,
        [
            "Options",
            "Network",
            "Database",
            "Webhooks",
            "Wallets and trust",
            "Console",
            "Observability"
        ],
        "{sections:?}"
    );
    let under =
        |heading: &str| -> &Vec<String> { &sections.iter().find(|(h, _)| h == heading).unwrap().1 };
    assert_eq!(under("Options"), &["--help"], "only --help stays ungrouped");
    for (heading, flag) in [
        ("Network", "--listen"),
        ("Network", "--public-url"),
        ("Network", "--verifier-token"),
        ("Network", "--rate-limit"),
        ("Database", "--database-url"),
        ("Database", "--database-pool-size"),
        ("Database", "--database-statement-timeout"),
        ("Database", "--retention"),
        ("Webhooks", "--allow-private-webhooks"),
        ("Webhooks", "--webhook-retry-schedule"),
        ("Webhooks", "--webhook-lease"),
        ("Wallets and trust", "--eu-av-trust-anchors"),
        ("Wallets and trust", "--mdl-vical"),
        ("Wallets and trust", "--trust-refresh"),
        ("Wallets and trust", "--eu-av-wallet-scheme"),
        ("Wallets and trust", "--dc-api-signing-key"),
        ("Wallets and trust", "--zk-circuits"),
        ("Wallets and trust", "--zk-workers"),
        ("Wallets and trust", "--credential-status"),
        ("Console", "--admin-listen"),
        ("Observability", "--metrics-listen"),
        ("Observability", "--log-format"),
    ] {
        assert!(
            under(heading).iter().any(|f| f == flag),
            "{flag} under {heading}: {sections:?}"
        );
    }
}
