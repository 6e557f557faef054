//! The key-value store the processes of a multi-process run meet through
//! (src/xla/distributed.rs): process 0 serves it on a TCP address ([`KvServer`]),
//! every process reaches it with a [`KvClient`] (`put`, a `get` that waits up to a
//! deadline, `try_get`). Plain std networking; nothing of PJRT.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// The key-value store over TCP.
// ---------------------------------------------------------------------------

/// Frames: a request is an op byte (`P`ut, `G`et, `T`ry-get), the key as a
/// little-endian u32 length and its bytes, then for a put the value (u32 length,
/// bytes) and for a get the wait in milliseconds (u64). A reply is a status byte
/// (`V` a value follows as u32 length and bytes, `N` no such key, `K` stored).
pub(super) const OP_PUT: u8 = b'P';
pub(super) const OP_GET: u8 = b'G';
pub(super) const OP_TRY: u8 = b'T';
pub(super) const REPLY_VALUE: u8 = b'V';
pub(super) const REPLY_NONE: u8 = b'N';
pub(super) const REPLY_STORED: u8 = b'K';
/// The longest key or value the store takes (a device topology is kilobytes).
pub(super) const MAX_LEN: u32 = 64 << 20;

pub(super) type Table = Arc<(Mutex<HashMap<Vec<u8>, Vec<u8>>>, Condvar)>;

/// The store process 0 serves: a thread accepting connections, one thread per
/// connection. It lives as long as the process.
pub struct KvServer {
    addr: SocketAddr,
}

impl KvServer {
    /// Listens on `addr` and serves from a background thread.
    pub fn start(addr: SocketAddr) -> io::Result<KvServer> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let table: Table = Arc::new((Mutex::new(HashMap::new()), Condvar::new()));
        std::thread::Builder::new()
            .name("faber-kv".to_string())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let table = Arc::clone(&table);
                    let _ = std::thread::Builder::new()
                        .name("faber-kv-conn".to_string())
                        .spawn(move || serve(stream, &table));
                }
            })?;
        Ok(KvServer { addr })
    }

    /// The address it listens on (the port the system chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

pub(super) fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

pub(super) fn read_bytes(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let n = read_u32(r)?;
    if n > MAX_LEN {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a key-value frame of {n} bytes"),
        ));
    }
    let mut v = vec![0u8; n as usize];
    r.read_exact(&mut v)?;
    Ok(v)
}

pub(super) fn frame_bytes(out: &mut Vec<u8>, bytes: &[u8]) -> io::Result<()> {
    let n = u32::try_from(bytes.len())
        .ok()
        .filter(|n| *n <= MAX_LEN)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a key or value of {} bytes", bytes.len()),
            )
        })?;
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(bytes);
    Ok(())
}

/// Answers the requests of one connection until it closes.
pub(super) fn serve(mut stream: TcpStream, table: &Table) {
    let _ = stream.set_nodelay(true);
    loop {
        let mut op = [0u8; 1];
        if stream.read_exact(&mut op).is_err() {
            return;
        }
        let Ok(reply) = answer(op[0], &mut stream, table) else {
            return;
        };
        if stream.write_all(&reply).is_err() {
            return;
        }
    }
}

pub(super) fn answer(op: u8, stream: &mut TcpStream, table: &Table) -> io::Result<Vec<u8>> {
    let key = read_bytes(stream)?;
    let (lock, ready) = &**table;
    let poisoned = || io::Error::other("the key-value table's lock is poisoned");
    let mut reply = Vec::new();
    let found = match op {
        OP_PUT => {
            let value = read_bytes(stream)?;
            lock.lock().map_err(|_| poisoned())?.insert(key, value);
            ready.notify_all();
            reply.push(REPLY_STORED);
            return Ok(reply);
        }
        OP_TRY => lock.lock().map_err(|_| poisoned())?.get(&key).cloned(),
        OP_GET => {
            let mut b = [0u8; 8];
            stream.read_exact(&mut b)?;
            let deadline = Instant::now() + Duration::from_millis(u64::from_le_bytes(b));
            let mut guard = lock.lock().map_err(|_| poisoned())?;
            loop {
                if let Some(v) = guard.get(&key) {
                    break Some(v.clone());
                }
                let now = Instant::now();
                if now >= deadline {
                    break None;
                }
                guard = ready
                    .wait_timeout(guard, deadline - now)
                    .map_err(|_| poisoned())?
                    .0;
            }
        }
        other => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unknown key-value request {other}"),
            ))
        }
    };
    match found {
        Some(v) => {
            reply.push(REPLY_VALUE);
            frame_bytes(&mut reply, &v)?;
        }
        None => reply.push(REPLY_NONE),
    }
    Ok(reply)
}

/// A connection-per-request client of the store; cheap to clone, usable from any
/// thread (the plugin calls its callbacks from its own).
#[derive(Clone, Debug)]
pub struct KvClient {
    addr: SocketAddr,
}

/// Why a store request failed.
#[derive(Debug)]
pub enum KvError {
    /// No coordinator answered at the address before the deadline.
    Unreachable { addr: SocketAddr, reason: String },
    /// The connection broke or a reply made no sense.
    Io(io::Error),
}

impl fmt::Display for KvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KvError::Unreachable { addr, reason } => {
                write!(f, "no coordinator answered at {addr}: {reason}")
            }
            KvError::Io(e) => write!(f, "the key-value store failed: {e}"),
        }
    }
}

impl KvClient {
    pub fn new(addr: SocketAddr) -> KvClient {
        KvClient { addr }
    }

    /// Connects, retrying while the coordinator is not listening yet, until
    /// `deadline`.
    fn connect(&self, deadline: Instant) -> Result<TcpStream, KvError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let attempt = TcpStream::connect_timeout(
                &self.addr,
                left.clamp(Duration::from_millis(10), Duration::from_secs(1)),
            );
            match attempt {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    return Ok(s);
                }
                Err(e) if Instant::now() >= deadline => {
                    return Err(KvError::Unreachable {
                        addr: self.addr,
                        reason: e.to_string(),
                    })
                }
                Err(_) => std::thread::sleep(Duration::from_millis(25)),
            }
        }
    }

    fn request(&self, frame: &[u8], deadline: Instant) -> Result<Option<Vec<u8>>, KvError> {
        let mut s = self.connect(deadline)?;
        s.write_all(frame).map_err(KvError::Io)?;
        let mut status = [0u8; 1];
        s.read_exact(&mut status).map_err(KvError::Io)?;
        match status[0] {
            REPLY_VALUE => read_bytes(&mut s).map(Some).map_err(KvError::Io),
            REPLY_NONE | REPLY_STORED => Ok(None),
            other => Err(KvError::Io(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unknown key-value reply {other}"),
            ))),
        }
    }

    /// Stores `value` under `key` (the coordinator reached before `deadline`).
    pub fn put(&self, key: &[u8], value: &[u8], deadline: Instant) -> Result<(), KvError> {
        let mut f = vec![OP_PUT];
        frame_bytes(&mut f, key).map_err(KvError::Io)?;
        frame_bytes(&mut f, value).map_err(KvError::Io)?;
        self.request(&f, deadline).map(|_| ())
    }

    /// The value of `key`, waiting for it until `deadline`; `None` when it never
    /// came.
    pub fn get(&self, key: &[u8], deadline: Instant) -> Result<Option<Vec<u8>>, KvError> {
        let mut f = vec![OP_GET];
        frame_bytes(&mut f, key).map_err(KvError::Io)?;
        let wait = deadline.saturating_duration_since(Instant::now());
        let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        f.extend_from_slice(&ms.to_le_bytes());
        self.request(&f, deadline)
    }

    /// The value of `key` now, if any.
    pub fn try_get(&self, key: &[u8], deadline: Instant) -> Result<Option<Vec<u8>>, KvError> {
        let mut f = vec![OP_TRY];
        frame_bytes(&mut f, key).map_err(KvError::Io)?;
        self.request(&f, deadline)
    }
}
