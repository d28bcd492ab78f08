// Guide text only: each chapter is a markdown file beside this one, so a paragraph moves between
// chapters by cut and paste. No code lives here (the modules do not count as the crate's API). A
// chapter links to another with a reference link (`[keys]`, `[text][keys]`) whose definition at its end
// names the file (`[keys]: keys.md`, right on GitHub); `links.md`, included first, defines the same
// labels as intra-doc links, and the first definition wins, so on docs.rs they lead to the modules.
#![doc = include_str!("links.md")]
#![doc = include_str!("index.md")]

pub mod start {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("start.md")]
}

pub mod running {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("running.md")]
}

pub mod keys {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("keys.md")]
}

pub mod judge {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("judge.md")]
}

pub mod suites {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("suites.md")]
}

pub mod yaml {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("yaml.md")]
}

pub mod datasets {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("datasets.md")]
}

pub mod matrix {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("matrix.md")]
}

pub mod conversations {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("conversations.md")]
}

pub mod tools {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("tools.md")]
}

pub mod app_calls {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("app_calls.md")]
}

pub mod statistics {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("statistics.md")]
}

pub mod calibration {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("calibration.md")]
}

pub mod cassettes {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("cassettes.md")]
}

pub mod providers {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("providers.md")]
}

pub mod budget {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("budget.md")]
}

pub mod reports {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("reports.md")]
}

pub mod ci {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("ci.md")]
}

pub mod failed_in_ci {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("failed_in_ci.md")]
}

pub mod glossary {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("glossary.md")]
}

pub mod changelog {
    #![doc = include_str!("links.md")]
    #![doc = include_str!("changelog.md")]
}
