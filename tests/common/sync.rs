//! Thread-safe stand-ins for `Cell` / `RefCell` in the test fakes: the engine's host traits
//! are `Send + Sync` natively, so the fakes' shared state lives behind locks. The method names
//! follow `Cell` / `RefCell` so the fakes read the same; a guard is never held across an await.

#![allow(dead_code)]

use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A `RefCell` over an `RwLock`.
#[derive(Debug, Default)]
pub struct Lock<T>(RwLock<T>);

impl<T> Lock<T> {
    pub fn new(value: T) -> Self {
        Self(RwLock::new(value))
    }
    pub fn borrow(&self) -> RwLockReadGuard<'_, T> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }
    pub fn borrow_mut(&self) -> RwLockWriteGuard<'_, T> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }
    pub fn replace(&self, value: T) -> T {
        std::mem::replace(&mut *self.borrow_mut(), value)
    }
    pub fn take(&self) -> T
    where
        T: Default,
    {
        std::mem::take(&mut *self.borrow_mut())
    }
}

/// A `Cell` over a `Mutex`.
#[derive(Debug, Default)]
pub struct SyncCell<T: Copy>(Mutex<T>);

impl<T: Copy> SyncCell<T> {
    pub fn new(value: T) -> Self {
        Self(Mutex::new(value))
    }
    pub fn get(&self) -> T {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    pub fn set(&self, value: T) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = value;
    }
    pub fn replace(&self, value: T) -> T {
        std::mem::replace(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()), value)
    }
}
