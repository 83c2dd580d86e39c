/* The phone's own copy of its score sheets: IndexedDB (kept through reloads, restarts and
 * days without a network), one record per match and side, keyed "scopa-table:<match>:<side>".
 * A record holds what was typed and, once sent, the outbox entry (see table-app.js). Without
 * IndexedDB (some private modes) it falls back to localStorage, which also survives a reload.
 * No library: the four calls below are all the sheet needs. The service worker loads this file
 * too (importScripts, to send the outbox by background sync): there `self` is the worker and
 * there is no localStorage, so only IndexedDB is read and written. */
(function () {
  "use strict";
  var DB = "scopa-table";
  var STORE = "sheets";
  var PREFIX = "scopa-table:";

  function open() {
    return new Promise(function (resolve, reject) {
      if (!self.indexedDB) {
        reject(new Error("no IndexedDB"));
        return;
      }
      var request = self.indexedDB.open(DB, 1);
      request.onupgradeneeded = function () {
        request.result.createObjectStore(STORE);
      };
      request.onsuccess = function () {
        resolve(request.result);
      };
      request.onerror = function () {
        reject(request.error);
      };
    });
  }

  function run(mode, action) {
    return open().then(function (db) {
      return new Promise(function (resolve, reject) {
        var tx = db.transaction(STORE, mode);
        var request = action(tx.objectStore(STORE));
        tx.oncomplete = function () {
          db.close();
          resolve(request ? request.result : undefined);
        };
        tx.onerror = tx.onabort = function () {
          db.close();
          reject(tx.error);
        };
      });
    });
  }

  function local(key) {
    try {
      return JSON.parse(self.localStorage.getItem(key) || "null");
    } catch (e) {
      return null;
    }
  }

  function localAll() {
    var found = [];
    try {
      for (var i = 0; i < self.localStorage.length; i++) {
        var key = self.localStorage.key(i);
        if (key && key.indexOf(PREFIX) === 0) {
          found.push(local(key));
        }
      }
    } catch (e) {
      /* nothing stored */
    }
    return found.filter(Boolean);
  }

  self.ScopaTableStore = {
    get: function (key) {
      return run("readonly", function (store) {
        return store.get(key);
      }).then(function (found) {
        return found || local(key); // a sheet kept by an older page, or without IndexedDB
      }, function () {
        return local(key);
      });
    },
    put: function (key, value) {
      value.key = key;
      return run("readwrite", function (store) {
        return store.put(value, key);
      }).then(function () {
        try {
          self.localStorage.removeItem(key);
        } catch (e) {
          /* nothing to clean */
        }
      }, function () {
        try {
          self.localStorage.setItem(key, JSON.stringify(value));
        } catch (e) {
          /* full: the server's draft still has what was checked online */
        }
      });
    },
    remove: function (key) {
      try {
        self.localStorage.removeItem(key);
      } catch (e) {
        /* nothing stored */
      }
      return run("readwrite", function (store) {
        return store.delete(key);
      }).catch(function () {});
    },
    all: function () {
      return run("readonly", function (store) {
        return store.getAll();
      }).then(function (found) {
        return (found || []).concat(localAll());
      }, localAll);
    },
  };
})();
