// pms-mysql8: a MySQL 8 dialect server for the tests (go-mysql-server v0.20.0, the engine of
// Dolt): no MySQL 8 server can be had from the package sources these machines reach. It
// speaks MySQL 8.0's SQL (the row alias `AS new`, utf8mb4_0900_bin, information_schema as
// MySQL 8 has it) through the MySQL protocol (mysql_native_password, no TLS), in memory.
//
// Usage: pms-mysql8 <port>. Listens on 127.0.0.1:<port>, superuser pms/pms@'%', database `app`
// (one server per test; a database made by CREATE DATABASE would not report its primary key in
// information_schema.STATISTICS). @@port and
// @@hostname are set to real values, local_infile is on (off by default here as in MySQL 8),
// and the `Uptime` status variable ticks (the engine leaves it at 0; the slot lock reads it).
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
)

func main() {
	port := "3306"
	if len(os.Args) > 1 {
		port = os.Args[1]
	}
	portNum, err := strconv.Atoi(port)
	if err != nil {
		panic(err)
	}

	db := memory.NewDatabase("app")
	db.BaseDatabase.EnablePrimaryKeyIndexes()
	pro := memory.NewDBProvider(db)
	engine := sqle.NewDefault(pro)

	// Users: enabling the mysql db turns on authentication.
	mysqlDb := engine.Analyzer.Catalog.MySQLDb
	mysqlDb.SetEnabled(true)
	ed := mysqlDb.Editor()
	mysqlDb.AddSuperUser(ed, "pms", "%", "pms")
	ed.Close()

	host, _ := os.Hostname()
	if err := sql.SystemVariables.AssignValues(map[string]interface{}{
		"port":         int64(portNum),
		"hostname":     host,
		"local_infile": int8(1),
	}); err != nil {
		fmt.Fprintf(os.Stderr, "warning: AssignValues: %v\n", err)
	}

	cfg := server.Config{
		Protocol: "tcp",
		Address:  "127.0.0.1:" + port,
	}
	// v0.20.0 signature: (cfg, engine, ctxFactory, sessionBuilder, listener).
	// (The _example/main.go shipped in v0.20.0 still uses the old 4-arg form and does not compile.)
	s, err := server.NewServer(cfg, engine, sql.NewContext, memory.NewSessionBuilder(pro), nil)
	if err != nil {
		panic(err)
	}

	start := time.Now()
	go func() {
		for range time.Tick(time.Second) {
			if sql.StatusVariables != nil {
				_ = sql.StatusVariables.SetGlobal("Uptime", uint64(time.Since(start).Seconds()))
			}
		}
	}()

	fmt.Fprintf(os.Stderr, "pms-mysql8 listening on 127.0.0.1:%s\n", port)
	if err := s.Start(); err != nil {
		panic(err)
	}
}
