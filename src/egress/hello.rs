//! What a TLS handshake shows before it is encrypted, read by hand from a tunnel's bytes:
//! the names a ClientHello asks for (its `server_name` extension, SNI: RFC 6066 §3), and
//! whether the server's first answer is a HelloRetryRequest (RFC 8446 §4.1.4), after which
//! the client sends a second ClientHello. A ClientHello may come in several records and
//! any number of reads; every length is checked against the bytes there are, so nothing
//! here panics, whatever it is given.

/// The most a ClientHello may take, its records' headers included (real ones take 0.2 to
/// 2 KiB; a post-quantum key share about 1.2 KiB of that).
pub(super) const MAX_HELLO: usize = 16 * 1024;
/// The largest record a client may send, encrypted (RFC 8446 §5.2).
pub(super) const MAX_RECORD: usize = (1 << 14) + 256;
/// The largest fragment of a record in plain text (RFC 8446 §5.1).
const MAX_FRAGMENT: usize = 1 << 14;

/// A record's content type: a handshake message.
pub(super) const HANDSHAKE: u8 = 22;
const ALERT: u8 = 21;
const CLIENT_HELLO: u8 = 1;
const SERVER_HELLO: u8 = 2;
const SERVER_NAME: u16 = 0;
const HOST_NAME: u8 = 0;
const ENCRYPTED_CLIENT_HELLO: u16 = 0xfe0d;
/// The `random` of a ServerHello that is a HelloRetryRequest: SHA-256 of the words
/// "HelloRetryRequest" (RFC 8446 §4.1.3).
const RETRY_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

/// What a ClientHello asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ClientHello {
    /// Each `host_name` in its `server_name` extensions, as sent (none: no SNI).
    pub(super) names: Vec<String>,
    /// It has an `encrypted_client_hello` extension (a real one, or GREASE: they cannot be
    /// told apart): a name inside is encrypted, and only the outer one above is seen.
    pub(super) ech: bool,
    /// The bytes its records take: what follows is the client's next record.
    pub(super) length: usize,
}

/// Why bytes that begin as TLS are not a ClientHello the proxy can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Malformed {
    #[error("a TLS record of type {0} before the ClientHello ended")]
    Record(u8),
    #[error("a TLS record of version {0:#06x}")]
    Version(u16),
    #[error("a TLS record of {0} bytes")]
    RecordLength(usize),
    #[error("a handshake message of type {0}, not a ClientHello")]
    NotHello(u8),
    #[error("a ClientHello of {0} bytes, more than {MAX_HELLO}")]
    TooLong(usize),
    #[error("its {0} runs past the end of the ClientHello")]
    Truncated(&'static str),
    #[error("bytes follow its {0}")]
    Trailing(&'static str),
    #[error("a server name of type {0}, not a host name")]
    NameType(u8),
    #[error("a server name extension that names no server")]
    NoNames,
}

/// A record's header at the start of `bytes`: its content type and its length; `None`
/// until its five bytes are there.
pub(super) fn header(bytes: &[u8]) -> Option<(u8, u16, usize)> {
    match *bytes.get(..5)? {
        [kind, major, minor, high, low] => Some((
            kind,
            u16::from_be_bytes([major, minor]),
            usize::from(u16::from_be_bytes([high, low])),
        )),
        _ => None,
    }
}

/// The ClientHello at the start of `bytes`, reassembled from its records; `Ok(None)` until
/// all of it is there. Its last record must end with it: a second handshake message in the
/// same flight (another ClientHello, say) would reach the server unread.
pub(super) fn client_hello(bytes: &[u8]) -> Result<Option<ClientHello>, Malformed> {
    let mut message = Vec::new();
    let mut at = 0;
    loop {
        let Some((kind, version, length)) = header(&bytes[at..]) else {
            return Ok(None);
        };
        if kind != HANDSHAKE {
            return Err(Malformed::Record(kind));
        }
        if version >> 8 != 3 {
            return Err(Malformed::Version(version));
        }
        // Empty handshake fragments are forbidden (RFC 8446 §5.1).
        if length == 0 || length > MAX_FRAGMENT {
            return Err(Malformed::RecordLength(length));
        }
        let Some(fragment) = bytes.get(at + 5..at + 5 + length) else {
            return Ok(None);
        };
        message.extend_from_slice(fragment);
        at += 5 + length;
        let Some(&[kind, high, middle, low]) = message.get(..4) else {
            continue;
        };
        if kind != CLIENT_HELLO {
            return Err(Malformed::NotHello(kind));
        }
        let size = 4 + (usize::from(high) << 16 | usize::from(middle) << 8 | usize::from(low));
        if size > MAX_HELLO {
            return Err(Malformed::TooLong(size));
        }
        match message.len().cmp(&size) {
            std::cmp::Ordering::Less => {}
            std::cmp::Ordering::Greater => return Err(Malformed::Trailing("handshake message")),
            std::cmp::Ordering::Equal => {
                let (names, ech) = extensions(&message[4..])?;
                return Ok(Some(ClientHello {
                    names,
                    ech,
                    length: at,
                }));
            }
        }
    }
}

/// The names in a ClientHello's body, and whether it has ECH.
fn extensions(body: &[u8]) -> Result<(Vec<String>, bool), Malformed> {
    let mut hello = Cursor(body);
    hello.take(2 + 32, "version and random")?;
    hello.vector8("session id")?;
    hello.vector16("cipher suites")?;
    hello.vector8("compression methods")?;
    let (mut names, mut ech) = (Vec::new(), false);
    // Extensions are optional before TLS 1.3: no extensions, no name.
    if hello.is_empty() {
        return Ok((names, ech));
    }
    let mut extensions = Cursor(hello.vector16("extensions")?);
    if !hello.is_empty() {
        return Err(Malformed::Trailing("extensions"));
    }
    while !extensions.is_empty() {
        let kind = extensions.u16("extension type")?;
        let data = extensions.vector16("extension")?;
        match kind {
            // Every one, should there be two: a server may read either.
            SERVER_NAME => server_names(data, &mut names)?,
            ENCRYPTED_CLIENT_HELLO => ech = true,
            _ => {}
        }
    }
    Ok((names, ech))
}

/// A `server_name` extension's names: every entry, each a host name.
fn server_names(data: &[u8], names: &mut Vec<String>) -> Result<(), Malformed> {
    let mut extension = Cursor(data);
    let mut list = Cursor(extension.vector16("server name list")?);
    if !extension.is_empty() {
        return Err(Malformed::Trailing("server name list"));
    }
    if list.is_empty() {
        return Err(Malformed::NoNames);
    }
    while !list.is_empty() {
        let kind = list.u8("server name type")?;
        let name = list.vector16("server name")?;
        if kind != HOST_NAME {
            return Err(Malformed::NameType(kind));
        }
        // Lossy: a name that is not UTF-8 is not a host name, and never matches one.
        names.push(String::from_utf8_lossy(name).into_owned());
    }
    Ok(())
}

/// Whether the server's first handshake message is a HelloRetryRequest; `None` until enough
/// of it is there to tell. Anything else (another message, an alert, not TLS) is
/// `Some(false)`: the client has nothing more to say in plain text.
pub(super) fn retry_requested(bytes: &[u8]) -> Option<bool> {
    // Type, length, version and random: the first 38 bytes of the message.
    let mut message = Vec::with_capacity(38);
    let mut at = 0;
    while message.len() < 38 {
        // Told from the first byte or two where they can tell: a server that is not
        // speaking TLS may send fewer than a header's five, and wait.
        match bytes[at..] {
            [kind, ..] if kind != HANDSHAKE => return Some(false),
            [_, major, ..] if major != 3 => return Some(false),
            _ => {}
        }
        let (_, _, length) = header(&bytes[at..])?;
        if length == 0 {
            return Some(false);
        }
        let fragment = &bytes[at + 5..];
        let fragment = &fragment[..length.min(fragment.len())];
        message.extend_from_slice(fragment);
        if message.first().is_some_and(|&kind| kind != SERVER_HELLO) {
            return Some(false);
        }
        if fragment.len() < length {
            break;
        }
        at += 5 + length;
    }
    message.get(6..38).map(|random| random == RETRY_RANDOM)
}

/// A fatal alert, in plain text (RFC 8446 §6), as the server would send it: what the
/// client's TLS library reports.
pub(super) fn alert(description: Alert) -> [u8; 7] {
    [ALERT, 3, 3, 0, 2, 2, description as u8]
}

/// The alerts the proxy sends for a ClientHello it refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Alert {
    /// A name the tunnel is not for.
    UnrecognizedName = 112,
    /// A ClientHello it cannot read.
    DecodeError = 50,
}

/// Reads a message front to back; each read fails rather than run past the end.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, length: usize, what: &'static str) -> Result<&'a [u8], Malformed> {
        if length > self.0.len() {
            return Err(Malformed::Truncated(what));
        }
        let (taken, rest) = self.0.split_at(length);
        self.0 = rest;
        Ok(taken)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, Malformed> {
        match *self.take(1, what)? {
            [byte] => Ok(byte),
            _ => Err(Malformed::Truncated(what)),
        }
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, Malformed> {
        match *self.take(2, what)? {
            [high, low] => Ok(u16::from_be_bytes([high, low])),
            _ => Err(Malformed::Truncated(what)),
        }
    }

    /// Bytes after a one-byte length.
    fn vector8(&mut self, what: &'static str) -> Result<&'a [u8], Malformed> {
        let length = self.u8(what)?;
        self.take(usize::from(length), what)
    }

    /// Bytes after a two-byte length.
    fn vector16(&mut self, what: &'static str) -> Result<&'a [u8], Malformed> {
        let length = self.u16(what)?;
        self.take(usize::from(length), what)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::Arc;

    use super::*;

    /// The ClientHello rustls sends for `name` (an IP address gets no SNI), every byte real.
    pub(in crate::egress) fn rustls_hello(name: &str, sni: bool) -> Vec<u8> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        config.enable_sni = sni;
        let name = rustls::pki_types::ServerName::try_from(name.to_owned()).expect("a name");
        let mut connection = rustls::ClientConnection::new(Arc::new(config), name).expect("client");
        let mut bytes = Vec::new();
        while connection.wants_write() {
            connection.write_tls(&mut bytes).expect("write");
        }
        bytes
    }

    /// The same handshake message in records of at most `size` bytes each.
    pub(in crate::egress) fn in_records(hello: &[u8], size: usize) -> Vec<u8> {
        let (_, _, length) = header(hello).expect("a record");
        let message = &hello[5..5 + length];
        message.chunks(size).flat_map(record).collect()
    }

    /// One handshake record holding `fragment`.
    fn record(fragment: &[u8]) -> Vec<u8> {
        let length = u16::try_from(fragment.len()).expect("short").to_be_bytes();
        [&[HANDSHAKE, 3, 1, length[0], length[1]][..], fragment].concat()
    }

    /// A HelloRetryRequest, as a server sends it.
    pub(in crate::egress) fn retry_request() -> Vec<u8> {
        let mut retry = vec![3, 3];
        retry.extend(RETRY_RANDOM);
        retry.extend([0, 0x13, 0x01, 0, 0, 0]);
        wrap(SERVER_HELLO, &retry)
    }

    /// A ClientHello built by hand, with these extensions (type, data) in one record.
    fn hello_with(extensions: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend([7; 32]);
        body.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
        let mut block = Vec::new();
        for (kind, data) in extensions {
            block.extend(kind.to_be_bytes());
            block.extend(u16::try_from(data.len()).expect("short").to_be_bytes());
            block.extend(data);
        }
        body.extend(u16::try_from(block.len()).expect("short").to_be_bytes());
        body.extend(block);
        wrap(CLIENT_HELLO, &body)
    }

    /// A handshake message of `kind` in one record.
    fn wrap(kind: u8, body: &[u8]) -> Vec<u8> {
        let size = u32::try_from(body.len()).expect("short").to_be_bytes();
        record(&[&[kind, size[1], size[2], size[3]][..], body].concat())
    }

    /// A `server_name` extension's data with these (type, name) entries.
    fn names(entries: &[(u8, &str)]) -> Vec<u8> {
        let mut list = Vec::new();
        for (kind, name) in entries {
            list.push(*kind);
            list.extend(u16::try_from(name.len()).expect("short").to_be_bytes());
            list.extend(name.as_bytes());
        }
        [
            &u16::try_from(list.len()).expect("short").to_be_bytes()[..],
            &list,
        ]
        .concat()
    }

    fn read(bytes: &[u8]) -> ClientHello {
        client_hello(bytes).expect("well formed").expect("whole")
    }

    #[test]
    fn a_real_client_hello_names_its_server_and_nothing_else() {
        let hello = rustls_hello("api.example.com", true);
        let read = read(&hello);
        assert_eq!(read.names, ["api.example.com"]);
        assert!(!read.ech);
        assert_eq!(read.length, hello.len());
        // What follows the ClientHello is the next record's, not the hello's.
        let mut more = hello.clone();
        more.extend([20, 3, 3, 0, 1, 1]);
        assert_eq!(client_hello(&more), Ok(Some(read)));
    }

    #[test]
    fn a_client_hello_without_sni_names_nothing() {
        for hello in [
            rustls_hello("127.0.0.1", true),
            rustls_hello("api.example.com", false),
            hello_with(&[]),
        ] {
            assert_eq!(read(&hello).names, Vec::<String>::new());
        }
        // No extensions block at all (TLS 1.2 allows it).
        let mut bare = vec![3, 3];
        bare.extend([7; 32]);
        bare.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
        assert_eq!(read(&wrap(CLIENT_HELLO, &bare)).names, Vec::<String>::new());
    }

    #[test]
    fn every_byte_boundary_and_every_record_size_reassembles() {
        let hello = rustls_hello("api.example.com", true);
        let whole = read(&hello);
        for cut in 0..hello.len() {
            assert_eq!(client_hello(&hello[..cut]), Ok(None), "cut at {cut}");
        }
        for size in [1, 2, 3, 4, 5, 37, 38, 100, 255, 1000] {
            let split = in_records(&hello, size);
            let read = read(&split);
            assert_eq!(
                (read.names, read.length),
                (whole.names.clone(), split.len()),
                "records of {size}"
            );
            // Cut anywhere, still incomplete, never an error.
            for cut in (0..split.len()).step_by(7) {
                assert_eq!(client_hello(&split[..cut]), Ok(None), "{size}, cut {cut}");
            }
        }
    }

    #[test]
    fn every_name_in_every_server_name_extension_is_read() {
        let two = hello_with(&[(
            SERVER_NAME,
            names(&[(HOST_NAME, "a.test"), (HOST_NAME, "b.test")]),
        )]);
        assert_eq!(read(&two).names, ["a.test", "b.test"]);
        let twice = hello_with(&[
            (SERVER_NAME, names(&[(HOST_NAME, "a.test")])),
            (SERVER_NAME, names(&[(HOST_NAME, "c.test")])),
        ]);
        assert_eq!(read(&twice).names, ["a.test", "c.test"]);
        let odd = hello_with(&[(SERVER_NAME, names(&[(HOST_NAME, "a\u{0}b\u{ff}.test")]))]);
        assert_eq!(read(&odd).names, ["a\u{0}b\u{ff}.test"]);
        let ech = hello_with(&[
            (SERVER_NAME, names(&[(HOST_NAME, "public.test")])),
            (ENCRYPTED_CLIENT_HELLO, vec![0; 40]),
        ]);
        let ech = read(&ech);
        assert_eq!((ech.names, ech.ech), (vec!["public.test".to_owned()], true));
    }

    #[test]
    fn malformed_client_hellos_are_refused_never_read() {
        let hello = rustls_hello("api.example.com", true);
        let mut not_handshake = hello.clone();
        not_handshake[0] = 23;
        let mut version = hello.clone();
        version[1] = 2;
        let old = u16::from_be_bytes([2, hello[2]]);
        let mut empty = hello.clone();
        empty[3..5].copy_from_slice(&[0, 0]);
        let mut huge = hello.clone();
        huge[3..5].copy_from_slice(&[0x40, 0x01]);
        let mut server_hello = hello.clone();
        server_hello[5] = SERVER_HELLO;
        let mut long = hello.clone();
        long[6..9].copy_from_slice(&[0, 0x40, 0x00]);
        let then_another = record(&[&hello[5..], &[CLIENT_HELLO, 0, 0, 0]].concat());
        for (what, bytes, refused) in [
            ("not a handshake", not_handshake, Malformed::Record(23)),
            ("version", version, Malformed::Version(old)),
            ("an empty record", empty, Malformed::RecordLength(0)),
            ("a record too long", huge, Malformed::RecordLength(0x4001)),
            ("a server hello", server_hello, Malformed::NotHello(2)),
            ("a message too long", long, Malformed::TooLong(0x4004)),
            (
                "another message after it",
                then_another,
                Malformed::Trailing("handshake message"),
            ),
            (
                "a name of another type",
                hello_with(&[(SERVER_NAME, names(&[(1, "a.test")]))]),
                Malformed::NameType(1),
            ),
            (
                "an empty list",
                hello_with(&[(SERVER_NAME, vec![0, 0])]),
                Malformed::NoNames,
            ),
            (
                "bytes after the list",
                hello_with(&[(SERVER_NAME, [names(&[(0, "a.test")]), vec![0]].concat())]),
                Malformed::Trailing("server name list"),
            ),
        ] {
            assert_eq!(client_hello(&bytes), Err(refused), "{what}");
        }
    }

    #[test]
    fn wrong_lengths_anywhere_never_panic() {
        let hello = rustls_hello("api.example.com", true);
        // Every byte of the message set to each of a few values: a length there runs short,
        // long or exact; the answer is a hello, an error, or more bytes wanted.
        for at in 5..hello.len() {
            for value in [0, 1, 0x7f, 0xff] {
                let mut changed = hello.clone();
                changed[at] = value;
                let _ = client_hello(&changed);
                let _ = client_hello(&changed[..changed.len() - 1]);
            }
        }
        // Grammar errors found in the body, each named.
        let mut body = vec![3, 3];
        body.extend([7; 32]);
        for (what, tail, refused) in [
            ("session id", vec![33], "session id"),
            ("cipher suites", vec![0, 0, 9], "cipher suites"),
            ("extensions", vec![0, 0, 0, 1, 0, 0, 9], "extensions"),
            (
                "extension",
                vec![0, 0, 0, 1, 0, 0, 4, 0, 0, 0, 9],
                "extension",
            ),
        ] {
            let bytes = wrap(CLIENT_HELLO, &[&body[..], &tail].concat());
            assert_eq!(
                client_hello(&bytes),
                Err(Malformed::Truncated(refused)),
                "{what}"
            );
        }
        assert_eq!(
            client_hello(&wrap(CLIENT_HELLO, &[3])),
            Err(Malformed::Truncated("version and random"))
        );
    }

    #[test]
    fn a_hello_retry_request_is_told_from_a_server_hello() {
        let retry = retry_request();
        let mut hello = retry.clone();
        hello[15] ^= 1;
        assert_eq!(retry_requested(&retry), Some(true));
        assert_eq!(retry_requested(&hello), Some(false));
        for cut in 0..43 {
            assert_eq!(retry_requested(&retry[..cut]), None, "cut at {cut}");
        }
        // In records of 5 bytes, with the rest of the flight after it.
        let split = in_records(&retry, 5);
        assert_eq!(retry_requested(&split), Some(true));
        // Seven records of five: 35 bytes of the message, short of its random's end.
        assert_eq!(retry_requested(&split[..70]), None);
        assert_eq!(retry_requested(&alert(Alert::DecodeError)), Some(false));
        assert_eq!(retry_requested(b"SSH-2.0-OpenSSH_9.6\r\n"), Some(false));
        assert_eq!(retry_requested(b"x"), Some(false));
        assert_eq!(retry_requested(&[HANDSHAKE, 2]), Some(false));
        assert_eq!(retry_requested(&[HANDSHAKE, 3, 3]), None);
        assert_eq!(retry_requested(&[HANDSHAKE, 3, 3, 0, 1, 11]), Some(false));
    }
}
