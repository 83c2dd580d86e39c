/* The phone's own copy of its score sheets: IndexedDB (kept through reloads, restarts and
 * days without a network), one record per match and side, keyed "scopa-table:<match>:<side>".
 * A record holds what was typed and, once sent, the outbox entry (see table-app.js). Without
 * IndexedDB (some private modes) it falls back to localStorage, which also survives a reload.
 * No library: the four calls below are all the sheet needs. */
(function () {
  "use strict";
  var DB = "scopa-table";
  var STORE = "sheets";
  var PREFIX = "scopa-table:";

  function open() {
    return new Promise(function (resolve, reject) {
      if (!window.indexedDB) {
        reject(new Error("no IndexedDB"));
        return;
      }
      var request = window.indexedDB.open(DB, 1);
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
      return JSON.parse(window.localStorage.getItem(key) || "null");
    } catch (e) {
      return null;
    }
  }

  function localAll() {
    var found = [];
    try {
      for (var i = 0; i < window.localStorage.length; i++) {
        var key = window.localStorage.key(i);
        if (key && key.indexOf(PREFIX) === 0) {
          found.push(local(key));
        }
      }
    } catch (e) {
      /* nothing stored */
    }
    return found.filter(Boolean);
  }

  window.ScopaTableStore = {
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
          window.localStorage.removeItem(key);
        } catch (e) {
          /* nothing to clean */
        }
      }, function () {
        try {
          window.localStorage.setItem(key, JSON.stringify(value));
        } catch (e) {
          /* full: the server's draft still has what was checked online */
        }
      });
    },
    remove: function (key) {
      try {
        window.localStorage.removeItem(key);
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
