//! `braid genkey` and `braid pubkey`: key tools that read and write what `wg genkey` and
//! `wg pubkey` do (base64 of 32 bytes), so `braid genkey | tee key | braid pubkey` works.

use std::io::{self, Read};

use anyhow::{Context, Result};
use braid_net::crypto::{generate_keypair, PrivateKey};

use crate::output::outln;

/// Prints a new private key.
pub fn genkey() -> Result<()> {
    let (private, _) = generate_keypair()?;
    outln!("{}", private.to_base64().as_str())
}

/// Reads a private key on stdin and prints its public key.
pub fn pubkey() -> Result<()> {
    let mut input = Vec::with_capacity(64);
    io::stdin().lock().read_to_end(&mut input).context("reading a private key on stdin")?;
    let public = public_key_of(&input);
    input.fill(0);
    outln!("{}", public?)?;
    Ok(())
}

fn public_key_of(input: &[u8]) -> Result<String> {
    let text = std::str::from_utf8(input).context("the private key is not text")?;
    let private = PrivateKey::from_base64(text).context("reading the private key")?;
    Ok(private.public_key().to_base64())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7748 section 6.1, Alice's key pair, in base64.
    #[test]
    fn public_key_of_a_known_private_key() {
        let private = b"dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=\n";
        assert_eq!(public_key_of(private).unwrap(), "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=");
    }

    #[test]
    fn bad_input_names_the_fault() {
        let err = public_key_of(b"short").unwrap_err();
        assert!(format!("{err:#}").contains("44 base64 characters"), "{err:#}");
    }
}
