"""mongod's built-in roles as data: each role's privileges (resource pattern, actions) and the
roles it inherits, from MongoDB 7.0's "Built-In Roles" reference.

A resource pattern is one of:
  "db"               every normal collection of the role's database, and the database itself
  "db:<coll>"        one collection of the role's database (system.js, system.profile)
  "anyNormal"        every normal collection of every database, and every database
  "anyDb:<coll>"     that collection name in every database
  "ns:<db>.<coll>"   one namespace
  "cluster"          the cluster (server-wide actions)
  "any"              every resource (root's reach)
A normal collection is one whose name does not start with "system.". Roles whose name ends in
AnyDatabase, and the cluster roles, exist only in the admin database (as on mongod).
"""
from __future__ import annotations

READ = ("changeStream", "collStats", "dbHash", "dbStats", "find", "killCursors", "listCollections",
        "listIndexes", "listSearchIndexes")
READ_WRITE = READ + ("convertToCapped", "createCollection", "createIndex", "dropCollection", "dropIndex",
                     "insert", "remove", "renameCollectionSameDB", "update")
DB_ADMIN = ("bypassDocumentValidation", "collMod", "collStats", "compact", "convertToCapped",
            "createCollection", "createIndex", "dbStats", "dropCollection", "dropDatabase", "dropIndex",
            "enableProfiler", "listCollections", "listIndexes", "planCacheIndexFilter", "planCacheRead",
            "planCacheWrite", "reIndex", "renameCollectionSameDB", "storageDetails", "validate")
DB_ADMIN_PROFILE = ("changeStream", "collStats", "convertToCapped", "createCollection", "dbHash", "dbStats",
                    "dropCollection", "find", "killCursors", "listCollections", "listIndexes", "planCacheRead")
USER_ADMIN = ("changeCustomData", "changePassword", "createRole", "createUser", "dropRole", "dropUser",
              "grantRole", "revokeRole", "setAuthenticationRestriction", "viewRole", "viewUser")
CLUSTER_MONITOR = ("checkFreeMonitoringStatus", "connPoolStats", "getCmdLineOpts", "getDefaultRWConcern",
                   "getLog", "getParameter", "getShardMap", "hostInfo", "inprog", "listDatabases",
                   "listSessions", "listShards", "netstat", "replSetGetConfig", "replSetGetStatus",
                   "serverStatus", "shardingState", "top")
HOST_MANAGER = ("applicationMessage", "closeAllDatabases", "connPoolSync", "flushRouterConfig", "fsync",
                "invalidateUserCache", "killAnyCursor", "killAnySession", "killop", "logRotate", "resync",
                "setParameter", "shutdown", "touch", "unlock")
CLUSTER_MANAGER = ("appendOplogNote", "applicationMessage", "cleanupOrphaned", "flushRouterConfig",
                   "getDefaultRWConcern", "listSessions", "listShards", "removeShard", "replSetConfigure",
                   "replSetGetConfig", "replSetGetStatus", "replSetStateChange", "resync",
                   "setDefaultRWConcern", "setFeatureCompatibilityVersion", "setFreeMonitoring")
BACKUP = ("collStats", "dbHash", "dbStats", "find", "killCursors", "listCollections", "listIndexes")
RESTORE = ("bypassDocumentValidation", "changeCustomData", "changePassword", "collMod", "convertToCapped",
           "createCollection", "createIndex", "createRole", "createUser", "dropCollection", "dropRole",
           "dropUser", "grantRole", "insert", "revokeRole", "viewRole", "viewUser")
SYSTEM_AUTH_WRITE = ("find", "insert", "remove", "update", "createIndex", "collStats", "dbStats")
#: "any" with this action set: every action (root)
ALL_ACTIONS = ("*",)

Privileges = tuple[tuple[str, tuple[str, ...]], ...]

#: name -> (privileges, inherited built-in roles (same database), admin database only)
BUILTIN_ROLES: dict[str, tuple[Privileges, tuple[str, ...], bool]] = {
    "read": ((("db", READ), ("db:system.js", READ)), (), False),
    "readWrite": ((("db", READ_WRITE), ("db:system.js", READ_WRITE)), (), False),
    "dbAdmin": ((("db", DB_ADMIN), ("db:system.profile", DB_ADMIN_PROFILE)), (), False),
    "userAdmin": ((("db", USER_ADMIN),), (), False),
    "dbOwner": ((), ("readWrite", "dbAdmin", "userAdmin"), False),
    "clusterMonitor": ((("cluster", CLUSTER_MONITOR),
                        ("anyNormal", ("collStats", "dbStats", "getShardVersion", "indexStats")),
                        ("ns:local.system.replset", ("find",)), ("ns:local.oplog.rs", ("find", "collStats"))),
                       (), True),
    "hostManager": ((("cluster", HOST_MANAGER), ("anyNormal", ("killCursors", "repairDatabase"))), (), True),
    "clusterManager": ((("cluster", CLUSTER_MANAGER),
                        ("ns:local.system.replset", ("find", "insert", "remove", "update"))), (), True),
    "clusterAdmin": ((("anyNormal", ("dropDatabase",)),),
                     ("clusterManager", "clusterMonitor", "hostManager"), True),
    "readAnyDatabase": ((("anyNormal", READ), ("anyDb:system.js", READ), ("cluster", ("listDatabases",))),
                        (), True),
    "readWriteAnyDatabase": ((("anyNormal", READ_WRITE), ("anyDb:system.js", READ_WRITE),
                              ("cluster", ("listDatabases",))), (), True),
    "userAdminAnyDatabase": ((("anyNormal", USER_ADMIN),
                              ("cluster", ("authSchemaUpgrade", "invalidateUserCache", "listDatabases",
                                           "viewUser")),
                              ("ns:admin.system.users", ("collStats", "dbHash", "dbStats", "find", "killCursors",
                                                         "planCacheRead")),
                              ("ns:admin.system.roles", ("collStats", "dbHash", "dbStats", "find", "killCursors",
                                                         "planCacheRead"))), (), True),
    "dbAdminAnyDatabase": ((("anyNormal", DB_ADMIN), ("anyDb:system.profile", DB_ADMIN_PROFILE),
                            ("cluster", ("listDatabases",))), (), True),
    "backup": ((("any", BACKUP),
                ("cluster", ("appendOplogNote", "getParameter", "listDatabases", "serverStatus"))), (), True),
    "restore": ((("anyNormal", RESTORE), ("anyDb:system.js", RESTORE + ("find", "remove", "update")),
                 ("ns:admin.system.users", SYSTEM_AUTH_WRITE), ("ns:admin.system.roles", SYSTEM_AUTH_WRITE),
                 ("cluster", ("getParameter",))), (), True),
    "root": ((("any", ALL_ACTIONS),), (), True),
}


def is_builtin(role: str, db: str) -> bool:
    """Whether role@db names a built-in role (the admin-only ones exist only on admin)."""
    entry = BUILTIN_ROLES.get(role)
    return entry is not None and (not entry[2] or db == "admin")


__all__ = ["ALL_ACTIONS", "BUILTIN_ROLES", "Privileges", "is_builtin"]
