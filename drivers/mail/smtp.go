package mail

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-smtp"
)

// sender submits one message.
type sender interface {
	send(ctx context.Context, from string, rcpts []string, msg []byte) error
	// check connects and logs in without sending.
	check(ctx context.Context) error
}

// smtpSender submits over a new SMTP connection per message, with the
// driver's TLS mode, credentials and timeout.
type smtpSender struct {
	cfg   *Config
	creds credentials
}

func (s *smtpSender) send(ctx context.Context, from string, rcpts []string, msg []byte) error {
	return s.session(ctx, func(c *smtp.Client) error {
		if err := c.SendMail(from, rcpts, bytes.NewReader(msg)); err != nil {
			return fmt.Errorf("smtp: sending to %s: %w", strings.Join(rcpts, ", "), err)
		}
		return nil
	})
}

func (s *smtpSender) check(ctx context.Context) error {
	return s.session(ctx, func(c *smtp.Client) error {
		if err := c.Noop(); err != nil {
			return fmt.Errorf("smtp: NOOP to %s: %w", s.cfg.SMTPAddr, err)
		}
		return nil
	})
}

// session connects, says hello (with TLS as configured), logs in, runs f and
// quits, all within the driver's timeout and ctx.
func (s *smtpSender) session(ctx context.Context, f func(c *smtp.Client) error) (err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.Timeout, fmt.Errorf("the SMTP server %s did not answer within %s", s.cfg.SMTPAddr, s.cfg.Timeout))
	defer cancel()
	conn, err := dial(ctx, s.cfg.SMTPAddr, s.cfg.SMTPTLS, s.cfg.TLSConfig, s.cfg.Timeout)
	if err != nil {
		return fmt.Errorf("smtp: connecting to %s: %w", s.cfg.SMTPAddr, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer func() {
		if !stop() {
			err = fmt.Errorf("smtp: %w", context.Cause(ctx))
		}
	}()
	conn.SetDeadline(time.Now().Add(s.cfg.Timeout))
	conn.reset(1 << 20) // a submission server answers in short lines
	var c *smtp.Client
	if s.cfg.SMTPTLS == TLSStartTLS {
		c, err = smtp.NewClientStartTLS(conn, tlsConfigFor(s.cfg.TLSConfig, s.cfg.SMTPAddr))
		if err != nil {
			conn.Close()
			return fmt.Errorf("smtp: STARTTLS with %s: %w", s.cfg.SMTPAddr, err)
		}
	} else {
		c = smtp.NewClient(conn)
	}
	defer c.Close()
	c.CommandTimeout, c.SubmissionTimeout = s.cfg.Timeout, s.cfg.Timeout
	if s.creds.provider != nil {
		secret, err := s.creds.secret(ctx)
		if err != nil {
			return err
		}
		if err := c.Auth(s.creds.sasl(s.cfg.Username, secret, s.cfg.SMTPAddr)); err != nil {
			return fmt.Errorf("smtp: %s authentication as %q: %w", s.creds.mech, s.cfg.Username, err)
		}
	}
	if err := f(c); err != nil {
		return err
	}
	// The server took a message when it answered the final dot; a failing
	// QUIT does not undo that.
	_ = c.Quit()
	return nil
}
