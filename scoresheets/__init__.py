"""At the table: private links, the players' phone score sheets and countersigning."""
